#pragma once
// Events a port raises for the software above it (the verbs async events).
#include <cstdint>

namespace ibfab::fabric {

enum class PortEvent : uint8_t {
  Active,            // IBV_EVENT_PORT_ACTIVE
  Error,             // IBV_EVENT_PORT_ERR: left Active
  LidChange,         // IBV_EVENT_LID_CHANGE
  PkeyChange,        // IBV_EVENT_PKEY_CHANGE
  SmChange,          // IBV_EVENT_SM_CHANGE: MasterSMLID changed
  ClientReregister,  // IBV_EVENT_CLIENT_REREGISTER
};

const char* to_string(PortEvent e);

class Hca;

class PortEventListener {
 public:
  virtual ~PortEventListener() = default;
  virtual void on_port_event(Hca& hca, uint8_t port, PortEvent event) = 0;
};

}  // namespace ibfab::fabric
