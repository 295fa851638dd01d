/* echo_server PORT COUNT: accepts one rdma_cm connection on PORT (any
 * address), receives COUNT messages and sends each back in upper case,
 * then exits 0. Any failure: a line on stderr and exit 1. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "echo.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: echo_server PORT COUNT\n");
    return 2;
  }
  const long count = atol(argv[2]);
  struct rdma_addrinfo hints = {.ai_flags = RAI_PASSIVE, .ai_port_space = RDMA_PS_TCP};
  struct rdma_addrinfo* res = NULL;
  if (rdma_getaddrinfo(NULL, argv[1], &hints, &res)) return fail("rdma_getaddrinfo");
  struct ibv_qp_init_attr attr = {.cap = {.max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1},
                                  .sq_sig_all = 1};
  struct rdma_cm_id* listener = NULL;
  if (rdma_create_ep(&listener, res, NULL, &attr)) return fail("rdma_create_ep");
  rdma_freeaddrinfo(res);
  if (rdma_listen(listener, 1)) return fail("rdma_listen");
  struct rdma_cm_id* id = NULL;
  if (rdma_get_request(listener, &id)) return fail("rdma_get_request");

  char buf[kEchoMessage];
  struct ibv_mr* mr = rdma_reg_msgs(id, buf, sizeof buf);
  if (!mr) return fail("rdma_reg_msgs");
  if (rdma_post_recv(id, NULL, buf, sizeof buf, mr)) return fail("rdma_post_recv");
  if (rdma_accept(id, NULL)) return fail("rdma_accept");
  for (long i = 0; i < count; ++i) {
    struct ibv_wc wc;
    if (rdma_get_recv_comp(id, &wc) <= 0 || wc.status != IBV_WC_SUCCESS) return fail("receive");
    for (size_t c = 0; c < sizeof buf && buf[c]; ++c) buf[c] = (char)toupper((unsigned char)buf[c]);
    /* The next message may come as soon as this answer has gone. */
    if (i + 1 < count && rdma_post_recv(id, NULL, buf, sizeof buf, mr)) return fail("rdma_post_recv");
    char out[kEchoMessage];
    memcpy(out, buf, sizeof out);
    if (rdma_post_send(id, NULL, out, sizeof out, NULL, IBV_SEND_INLINE)) return fail("rdma_post_send");
    if (rdma_get_send_comp(id, &wc) <= 0 || wc.status != IBV_WC_SUCCESS) return fail("send");
  }
  printf("echo_server: echoed %ld messages\n", count);
  rdma_disconnect(id);
  rdma_dereg_mr(mr);
  rdma_destroy_ep(id);
  rdma_destroy_ep(listener);
  return 0;
}
