#pragma once
// Taking the receive WQEs a client posted in its shared receive ring, as
// connected QPs and SRQs both do.
#include <cstdint>
#include <cstring>
#include <vector>

#include "api/client/verbs_rings.h"
#include "fabric/model/hca.h"

namespace ibfab::api {

// Moves the receive WQEs a client posted in `rings`' receive ring (depth,
// slot size and SGE limit as the engine sized them) into the model through
// `post` (a post_recv); `taken` is the engine's count. 0: nothing posted,
// 1: work done, -1: the ring holds what no library writes.
template <class Post>
int take_receive_ring(rings::QpRings* rings, uint32_t& taken, uint32_t sq_depth, uint32_t sq_slot, uint32_t depth,
                      uint32_t slot, uint32_t max_sge, std::vector<fabric::Sge>& sges, Post post) {
  const uint32_t posted = rings->rq_posted.value.load(std::memory_order_acquire);
  if (posted == taken) return 0;
  if (posted - taken > depth) return -1;
  while (taken != posted) {
    const uint8_t* s = rings->recv_slot(taken, sq_depth, sq_slot, depth, slot);
    rings::RecvWqe w;
    std::memcpy(&w, s, sizeof w);
    if (w.num_sge > max_sge || sizeof w + std::size_t{w.num_sge} * sizeof(rings::RingSge) > slot) return -1;
    for (uint32_t i = 0; i < w.num_sge; ++i) {
      rings::RingSge r;
      std::memcpy(&r, s + sizeof w + i * sizeof(rings::RingSge), sizeof r);
      sges[i] = {r.addr, r.length, r.lkey};
    }
    fabric::RecvWr r;
    r.wr_id = w.wr_id;
    r.num_sge = w.num_sge;
    r.sge = sges.data();
    const int e = post(r);
    if (e == ENOMEM) break;  // more than the client may have outstanding: taken when room is made
    if (e != 0) return -1;
    rings->rq_taken.value.store(++taken, std::memory_order_release);
  }
  return 1;
}

}  // namespace ibfab::api
