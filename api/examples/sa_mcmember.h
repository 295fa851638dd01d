/* Joining and leaving a multicast group through the subnet administrator:
 * an SA MCMemberRecord Set (join) or Delete (leave) MAD, built by hand and
 * sent with libibumad from port 1 of one HCA. */
#ifndef SA_MCMEMBER_H
#define SA_MCMEMBER_H

#include <stdint.h>

#include <infiniband/verbs.h>

/* A group as the SA describes it in its answer. */
struct mc_group {
  union ibv_gid mgid;
  uint32_t qkey;
  uint16_t mlid;
  uint16_t pkey;
  uint8_t mtu; /* an enum ibv_mtu value */
  uint8_t sl;
  uint8_t traffic_class;
  uint8_t hop_limit;
  uint32_t flow_label;
};

/* Joins `port_gid` (port 1 of device `ca`) to group `mgid` as a full
 * member, asking the SA at `sm_lid` (ibv_port_attr.sm_lid) for Q_Key
 * `qkey` and P_Key 0xffff should the join create the group. Fills `group`
 * from the SA's answer; returns 0, or -1 with a message on stderr. */
int sa_join(const char *ca, uint16_t sm_lid, const union ibv_gid *mgid, const union ibv_gid *port_gid, uint32_t qkey,
            struct mc_group *group);

/* Takes `port_gid` out of `group` (full membership); 0 or -1 as above. */
int sa_leave(const char *ca, uint16_t sm_lid, const struct mc_group *group, const union ibv_gid *port_gid);

#endif
