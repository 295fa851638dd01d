# librdmacm's connections (RC through ib_cm's REQ/REP/RTU and DREQ/DREP),
# with rdma-core's and perftest's own programs, unmodified, against
# `ibfab serve` on fat-tree:2:4. H1 is the built-in SM's host; H2 is on
# its leaf, H6 and H8 across a spine. Servers print that they start before
# they listen: their clients run under retry_until_listening.sh, which
# runs a client again while it is refused with reason 8 (invalid service
# ID, nobody listening yet), as each program prints that.
# Included from tests/tools_real/CMakeLists.txt (ibfab_served_test, _bw,
# _lat and _retry_until_listening come from there).

set(_retry_cm ${_retry_until_listening} 30 --refused)

# rping -v -C 10: ten RDMA READ/WRITE rounds of a 64-byte buffer whose
# text shifts by one letter each round; both sides print each round's
# text, which must be exactly rping's pattern.
set(_rping_first "ping data: rdma-ping-0: ABCDEFGHIJKLMNOPQRSTUVWXYZ\\[\\\\\\]\\^_`abcdefghijklmnopqr$")
set(_rping_last "ping data: rdma-ping-9: JKLMNOPQRSTUVWXYZ\\[\\\\\\]\\^_`abcdefghijklmnopqrstuvwxyzA$")
function(ibfab_rping_test name server_node server_ip client_node port)
  ibfab_served_test(${name} fat-tree:2:4 ${client_node} "^${_rping_first}|||^${_rping_last}"
    --count "^ping data: rdma-ping-[0-9]: " 10 ${ARGN}
    --background ${server_node} sh -c "echo rping: starting server && exec rping -s -a ${server_ip} -p ${port} -v -C 10"
      --wait-for "rping: starting server" --line-buffered
      --background-expect "^server ${_rping_first}|||^server ${_rping_last}"
    -- ${_retry_cm} "REJECTED, error 8" -- rping -c -a ${server_ip} -p ${port} -v -C 10)
endfunction()
# The server on the SM's host, the client across a spine; the capture
# shows, in tshark's reading, the connection's CM messages in order and the
# RC operations rping makes (SENDs, RDMA READ and WRITE, ACKs).
set(_any "(.|\n)*")
ibfab_rping_test(rping H1 10.1.0.1 H6 18750 --pcap-expect
  "CM: ConnectRequest${_any}CM: ConnectReply${_any}CM: ReadyToUse${_any}RC Send Only${_any}RC RDMA Read Request${_any}RC RDMA Read Response Only${_any}RC RDMA Write Only${_any}RC Acknowledge${_any}CM: DisconnectRequest${_any}CM: DisconnectReply")
ibfab_rping_test(rping_same_leaf H1 10.1.0.1 H2 18751)
ibfab_rping_test(rping_client_on_sm_host H8 10.1.0.8 H1 18752)

# ucmatose: connections on one id each, messages both ways, then a
# disconnection from the server; -c and -C vary the connections and the
# messages per connection.
function(ibfab_ucmatose_test name client_node port)
  ibfab_served_test(${name} fat-tree:2:4 ${client_node}
    "^cmatose: connecting|||^data transfers complete|||^test complete|||^return status 0$"
    --background H1 ucmatose -p ${port} ${ARGN} --wait-for "cmatose: starting server" --line-buffered
      --background-expect "^cmatose: disconnecting|||^disconnected|||^test complete|||^return status 0$"
    -- ${_retry_cm} "REJECTED, error: 8" -- ucmatose -s 10.1.0.1 -p ${port} ${ARGN})
endfunction()
ibfab_ucmatose_test(ucmatose H6 18753)
ibfab_ucmatose_test(ucmatose_c8_C100 H2 18754 -c 8 -C 100)
ibfab_ucmatose_test(ucmatose_C1000_S4096 H8 18755 -C 1000 -S 4096)

# rdma_server / rdma_client: rdma-core's synchronous example (rdma_create_ep,
# rdma_get_request, rdma_accept waiting for ESTABLISHED, one SEND each way
# through rdma_verbs.h's helpers).
ibfab_served_test(rdma_server_client fat-tree:2:4 H6 "^rdma_client: start|||^rdma_client: end 0$"
  --background H1 rdma_server -p 18756 --wait-for "rdma_server: start" --line-buffered
    --background-expect "^rdma_server: end 0$"
  -- ${_retry_cm} "Connection refused" -- rdma_client -s 10.1.0.1 -p 18756)

# rdma_xserver / rdma_xclient -c x: rdma-core's XRC example, XRC ids in
# the IB port space. The client's rdma_create_ep makes an XRC_SEND QP, the
# server's rdma_get_request an XRC_RECV QP in the device's XRC domain; the
# server's XRC SRQ (on a CQ of its own) takes the client's one SEND,
# addressed by the SRQ number the REP's private data carried. (Without -c
# they are an RC pair, as rdma_server and rdma_client are.)
ibfab_served_test(rdma_xserver_xclient fat-tree:2:4 H6 "^rdma_xclient: start|||^rdma_xclient: end 0$"
  --background H1 rdma_xserver -p 18780 -c x --wait-for "rdma_xserver: start" --line-buffered
    --background-expect "^rdma_xserver: end 0$"
  -- ${_retry_cm} "Connection refused" -- rdma_xclient -s 10.1.0.1 -p 18780 -c x)

# cmtime: 200 connections made and torn down at once; each step's line
# counts them all (a disconnect that never completed shows 0 ms).
set(_cmtime_step "[ \t]+[0-9.]*[1-9][0-9.]*[ \t]+[0-9.]+[ \t]+[0-9.]+[ \t]+[0-9.]+$")
ibfab_served_test(cmtime fat-tree:2:4 H6
  "^connect      :${_cmtime_step}|||^disconnect   :${_cmtime_step}|||^destroy      :${_cmtime_step}"
  --background H1 sh -c "echo cmtime: starting server && exec cmtime -p 18757"
    --wait-for "cmtime: starting server" --line-buffered
  -- cmtime -s 10.1.0.1 -p 18757 -c 200)

# perftest with -R: the QPs are connected by rdma_cm (rdma_connect,
# rdma_accept with the QP's own number) instead of perftest's TCP
# exchange; the server on H1, the client on H6. Both print the results,
# but for ib_read_lat and ib_atomic_lat, whose server only answers, and
# shows the client's address.
# ibfab_perftest_cm_test(NAME PROGRAM PORT RESULT_LINE SERVER_EXPECT ARGS...)
function(ibfab_perftest_cm_test_as name program port result server_expect)
  ibfab_served_test(${name} fat-tree:2:4 H6 "${result}"
    --background H1 ${program} -R -p ${port} ${ARGN} --wait-for "Waiting for client" --line-buffered
      --background-expect "${server_expect}"
    -- ${_retry_cm} "Unexpected CM event bl blka 8" -- ${program} -R -p ${port} ${ARGN} 10.1.0.1)
endfunction()
function(ibfab_perftest_cm_test name program port result)
  ibfab_perftest_cm_test_as(${name} ${program} ${port} "${result}" "${result}" ${ARGN})
endfunction()
set(_client_seen "remote address: LID 0x0c QPN")
ibfab_perftest_cm_test(ib_send_bw_R ib_send_bw 18760 "^${_sp0}65536${_sp}1000${_bw}")
ibfab_perftest_cm_test(ib_write_bw_R ib_write_bw 18761 "^${_sp0}65536${_sp}1000${_bw}" -n 1000)
ibfab_perftest_cm_test(ib_read_bw_R ib_read_bw 18762 "^${_sp0}65536${_sp}1000${_bw}")
ibfab_perftest_cm_test(ib_atomic_bw_R ib_atomic_bw 18763 "^${_sp0}8${_sp}1000${_bw}")
ibfab_perftest_cm_test(ib_send_lat_R ib_send_lat 18764 "^${_sp0}2${_sp}1000${_lat}")
ibfab_perftest_cm_test(ib_write_lat_R ib_write_lat 18765 "^${_sp0}2${_sp}1000${_lat}")
ibfab_perftest_cm_test_as(ib_read_lat_R ib_read_lat 18766 "^${_sp0}2${_sp}1000${_lat}" "${_client_seen}")
ibfab_perftest_cm_test_as(ib_atomic_lat_R ib_atomic_lat 18767 "^${_sp0}8${_sp}1000${_lat}" "${_client_seen}")
# UD data, connected by rdma_cm over an RC exchange.
ibfab_perftest_cm_test(ib_send_bw_UD_R ib_send_bw 18768 "^${_sp0}2048${_sp}1000${_bw}" -c UD -s 2048)

# The pairs that poll their CQs (two processes busy besides the engine).
set_tests_properties(real.rping real.rping_same_leaf real.rping_client_on_sm_host
  real.ucmatose real.ucmatose_c8_C100 real.ucmatose_C1000_S4096 real.rdma_server_client
  real.rdma_xserver_xclient real.cmtime
  real.ib_send_bw_R real.ib_write_bw_R real.ib_read_bw_R real.ib_atomic_bw_R
  real.ib_send_lat_R real.ib_write_lat_R real.ib_read_lat_R real.ib_atomic_lat_R real.ib_send_bw_UD_R
  PROPERTIES PROCESSORS 2)
