/* echo_client ADDRESS PORT COUNT: connects to echo_server over rdma_cm,
 * sends COUNT messages and checks that each comes back in upper case;
 * exits 0 when all did. Any failure: a line on stderr and exit 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "echo.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: echo_client ADDRESS PORT COUNT\n");
    return 2;
  }
  const long count = atol(argv[3]);
  struct rdma_addrinfo hints = {.ai_port_space = RDMA_PS_TCP};
  struct rdma_addrinfo* res = NULL;
  if (rdma_getaddrinfo(argv[1], argv[2], &hints, &res)) return fail("rdma_getaddrinfo");
  struct ibv_qp_init_attr attr = {.cap = {.max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1},
                                  .sq_sig_all = 1};
  struct rdma_cm_id* id = NULL;
  if (rdma_create_ep(&id, res, NULL, &attr)) return fail("rdma_create_ep");
  rdma_freeaddrinfo(res);
  char reply[kEchoMessage];
  struct ibv_mr* mr = rdma_reg_msgs(id, reply, sizeof reply);
  if (!mr) return fail("rdma_reg_msgs");
  if (rdma_connect(id, NULL)) return fail("rdma_connect");
  for (long i = 0; i < count; ++i) {
    if (rdma_post_recv(id, NULL, reply, sizeof reply, mr)) return fail("rdma_post_recv");
    char msg[kEchoMessage] = {0};
    snprintf(msg, sizeof msg, "hello %ld", i);
    if (rdma_post_send(id, NULL, msg, sizeof msg, NULL, IBV_SEND_INLINE)) return fail("rdma_post_send");
    struct ibv_wc wc;
    if (rdma_get_send_comp(id, &wc) <= 0 || wc.status != IBV_WC_SUCCESS) return fail("send");
    if (rdma_get_recv_comp(id, &wc) <= 0 || wc.status != IBV_WC_SUCCESS) return fail("receive");
    char want[kEchoMessage] = {0};
    snprintf(want, sizeof want, "HELLO %ld", i);
    if (strcmp(reply, want) != 0) {
      fprintf(stderr, "echo_client: message %ld came back as '%.*s', not '%s'\n", i, kEchoMessage, reply, want);
      return 1;
    }
  }
  printf("echo_client: %ld messages echoed\n", count);
  rdma_disconnect(id);
  rdma_dereg_mr(mr);
  rdma_destroy_ep(id);
  return 0;
}
