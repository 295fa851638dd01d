"""A served fabric for the benchmarks that compare the built-in SM and SA
with OpenSM 3.3.23 in the same run: `ibfab serve` with the built-in SM, or
with `--sm none` and opensm on H1 (the anchor), programs run on hosts with
`ibfab exec`."""
import os
import shutil
import subprocess
import tempfile
import time


class Served:
    def __init__(self, ibfab, topology, sm):
        """Serves `topology` with SM `sm` ("builtin" or "opensm"); returns once it is up."""
        self.dir = tempfile.mkdtemp(prefix="ibfab-bench-")
        self.sock = os.path.join(self.dir, "ibfab.sock")
        self.ibfab = ibfab
        args = [ibfab, "serve", "--topology", topology, "--socket", self.sock]
        if sm == "opensm":
            args += ["--sm", "none"]
        self.engine = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        for line in self.engine.stdout:
            if line.strip() == "ready":
                break
        self.opensm = None
        if sm == "opensm":
            env = dict(os.environ, OSM_CACHE_DIR=self.dir, OSM_TMP_DIR=self.dir)
            log = os.path.join(self.dir, "osm.log")
            self.opensm = subprocess.Popen(
                [ibfab, "exec", "--node", "H1", "--socket", self.sock, "--", "opensm", "-f", log],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
            deadline = time.time() + 120
            while time.time() < deadline and not (os.path.exists(log) and "SUBNET UP" in open(log).read()):
                time.sleep(0.2)
            time.sleep(2)  # the hosts' IPoIB joins, which follow the ports going Active

    def run(self, node, *args):
        """`args` on host `node`, started (stdout and stderr piped)."""
        return subprocess.Popen([self.ibfab, "exec", "--node", node, "--socket", self.sock, "--", *args],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def stop(self):
        for p in (self.opensm, self.engine):
            if p:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
        shutil.rmtree(self.dir, ignore_errors=True)
