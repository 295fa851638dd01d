// One process of the rdma_cm join load (bench/rdmacm_joins.py): joins
// `groups` multicast groups one after another through librdmacm, timing
// each from rdma_join_multicast_ex to its RDMA_CM_EVENT_MULTICAST_JOIN, then
// leaves them. Prints one line per join ("join <microseconds>"), then
// "span <first start ns> <last end ns>" (CLOCK_MONOTONIC), so that the
// driver can add up many processes.
//
// Usage: rdmacm_join_load GROUPS FIRST_GROUP_ADDRESS [START_AT_NS]
//   the i-th group is FIRST_GROUP_ADDRESS + i (IPv4); joining starts when
//   CLOCK_MONOTONIC reaches START_AT_NS (a common start for all processes).
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <rdma/rdma_cma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int expect(struct rdma_event_channel* ch, enum rdma_cm_event_type type) {
  struct rdma_cm_event* ev;
  if (rdma_get_cm_event(ch, &ev)) {
    perror("rdma_get_cm_event");
    return -1;
  }
  const int ok = ev->event == type && ev->status == 0;
  if (!ok) fprintf(stderr, "got %s (status %d), wanted %s\n", rdma_event_str(ev->event), ev->status, rdma_event_str(type));
  rdma_ack_cm_event(ev);
  return ok ? 0 : -1;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s GROUPS FIRST_GROUP_ADDRESS [START_AT_NS]\n", argv[0]);
    return 2;
  }
  const int groups = atoi(argv[1]);
  struct in_addr first;
  if (groups <= 0 || inet_pton(AF_INET, argv[2], &first) != 1) {
    fprintf(stderr, "bad arguments\n");
    return 2;
  }
  const int64_t start_at = argc > 3 ? atoll(argv[3]) : 0;
  struct sockaddr_in* addrs = calloc((size_t)groups, sizeof *addrs);
  for (int i = 0; i < groups; ++i) {
    addrs[i].sin_family = AF_INET;
    addrs[i].sin_addr.s_addr = htonl(ntohl(first.s_addr) + (uint32_t)i);
  }
  struct rdma_event_channel* ch = rdma_create_event_channel();
  struct rdma_cm_id* id;
  if (!ch || rdma_create_id(ch, &id, NULL, RDMA_PS_UDP)) {
    perror("rdma_create_id");
    return 1;
  }
  // Bound through the routing table, as mckey does without -b.
  if (rdma_resolve_addr(id, NULL, (struct sockaddr*)&addrs[0], 2000) || expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED)) {
    perror("rdma_resolve_addr");
    return 1;
  }
  while (now_ns() < start_at) {
    struct timespec t = {0, 100000};
    nanosleep(&t, NULL);
  }
  const int64_t begin = now_ns();
  for (int i = 0; i < groups; ++i) {
    struct rdma_cm_join_mc_attr_ex attr = {0};
    attr.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS | RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS;
    attr.join_flags = RDMA_MC_JOIN_FLAG_FULLMEMBER;
    attr.addr = (struct sockaddr*)&addrs[i];
    const int64_t t0 = now_ns();
    if (rdma_join_multicast_ex(id, &attr, NULL) || expect(ch, RDMA_CM_EVENT_MULTICAST_JOIN)) {
      perror("rdma_join_multicast_ex");
      return 1;
    }
    printf("join %.3f\n", (double)(now_ns() - t0) / 1000.0);
  }
  const int64_t end = now_ns();
  printf("span %lld %lld\n", (long long)begin, (long long)end);
  for (int i = 0; i < groups; ++i) rdma_leave_multicast(id, (struct sockaddr*)&addrs[i]);
  rdma_destroy_id(id);
  rdma_destroy_event_channel(ch);
  free(addrs);
  return 0;
}
