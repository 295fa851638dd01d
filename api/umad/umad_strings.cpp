// Names of management classes, methods, attributes and MAD status codes
// (umad_str.h), as rdma-core 44 spells them, including its quirks
// ("CongestionManagment"). Every function returns a static string, and
// "<unknown>" for a value it has no name for ("<unknown", without the '>',
// from umad_method_str); none of them fails.
#include <endian.h>
#include <infiniband/umad_sa.h>
#include <infiniband/umad_sm.h>
#include <infiniband/umad_str.h>
#include <infiniband/umad_types.h>

#include <cstdint>
#include <span>

#include "api/umad/export.h"

namespace {

constexpr const char* kUnknown = "<unknown>";
constexpr const char* kUnknownMethod = "<unknown";

struct Name {
  std::uint16_t value;
  const char* name;
};

const char* find(std::span<const Name> table, unsigned value) {
  for (const Name& entry : table)
    if (entry.value == value) return entry.name;
  return nullptr;
}

constexpr Name kClasses[] = {
    {UMAD_CLASS_SUBN_LID_ROUTED, "Subn"},      {UMAD_CLASS_SUBN_DIRECTED_ROUTE, "Subn"},
    {UMAD_CLASS_SUBN_ADM, "SubnAdm"},          {UMAD_CLASS_PERF_MGMT, "Perf"},
    {UMAD_CLASS_BM, "BM"},                     {UMAD_CLASS_DEVICE_MGMT, "DevMgt"},
    {UMAD_CLASS_CM, "ComMgt"},                 {UMAD_CLASS_SNMP, "SNMP"},
    {UMAD_CLASS_DEVICE_ADM, "DevAdm"},         {UMAD_CLASS_BOOT_MGMT, "BootMgt"},
    {UMAD_CLASS_BIS, "BIS"},                   {UMAD_CLASS_CONG_MGMT, "CongestionManagment"},
};

// Methods every class shares; SubnAdm adds its own (kSaMethods).
constexpr Name kMethods[] = {
    {UMAD_METHOD_GET, "Get"},
    {UMAD_METHOD_SET, "Set"},
    {UMAD_METHOD_GET_RESP, "GetResp"},
    {UMAD_METHOD_SEND, "Send"},
    {UMAD_METHOD_TRAP, "Trap"},
    {UMAD_METHOD_REPORT, "Report"},
    {UMAD_METHOD_REPORT_RESP, "ReportResp"},
    {UMAD_METHOD_TRAP_REPRESS, "TrapRepress"},
};

constexpr Name kSaMethods[] = {
    {UMAD_SA_METHOD_GET_TABLE, "GetTable"},
    {UMAD_SA_METHOD_GET_TABLE_RESP, "GetTableResp"},
    {UMAD_SA_METHOD_DELETE, "Delete"},
    {UMAD_SA_METHOD_DELETE_RESP, "DeleteResp"},
    {UMAD_SA_METHOD_GET_MULTI, "GetMulti"},
    {UMAD_SA_METHOD_GET_MULTI_RESP, "GetMultiResp"},
    {UMAD_SA_METHOD_GET_TRACE_TABLE, "GetTraceTable"},
};

// Attributes every class shares; SM, SA and CM add their own.
constexpr Name kCommonAttributes[] = {
    {UMAD_ATTR_CLASS_PORT_INFO, "Class Port Info"},
    {UMAD_ATTR_NOTICE, "Notice"},
    {UMAD_ATTR_INFORM_INFO, "Inform Info"},
};

constexpr Name kSmAttributes[] = {
    {UMAD_SM_ATTR_NODE_DESC, "NodeDescription"},
    {UMAD_SM_ATTR_NODE_INFO, "NodeInfo"},
    {UMAD_SM_ATTR_SWITCH_INFO, "SwitchInfo"},
    {UMAD_SM_ATTR_GUID_INFO, "GUIDInfo"},
    {UMAD_SM_ATTR_PORT_INFO, "PortInfo"},
    {UMAD_SM_ATTR_PKEY_TABLE, "P_KeyTable"},
    {UMAD_SM_ATTR_SLVL_TABLE, "SLtoVLMappingTable"},
    {UMAD_SM_ATTR_VL_ARB_TABLE, "VLArbitrationTable"},
    {UMAD_SM_ATTR_LINEAR_FT, "LinearForwardingTable"},
    {UMAD_SM_ATTR_RANDOM_FT, "RandomForwardingTable"},
    {UMAD_SM_ATTR_MCAST_FT, "MulticastForwardingTable"},
    {UMAD_SM_ATTR_LINK_SPD_WIDTH_TABLE, "LinkSpeedWidthPairsTable"},
    {UMAD_SM_ATTR_VENDOR_MADS_TABLE, "VendorSpecificMadsTable"},
    {UMAD_SM_ATTR_HIERARCHY_INFO, "HierarchyInfo"},
    {UMAD_SM_ATTR_SM_INFO, "SMInfo"},
    {UMAD_SM_ATTR_VENDOR_DIAG, "VendorDiag"},
    {UMAD_SM_ATTR_LED_INFO, "LedInfo"},
    {UMAD_SM_ATTR_CABLE_INFO, "CableInfo"},
    {UMAD_SM_ATTR_PORT_INFO_EXT, "PortInfoExtended"},
};

constexpr Name kSaAttributes[] = {
    {UMAD_SA_ATTR_NODE_REC, "NodeRecord"},
    {UMAD_SA_ATTR_PORT_INFO_REC, "PortInfoRecord"},
    {UMAD_SA_ATTR_SLVL_REC, "SLtoVLMappingTableRecord"},
    {UMAD_SA_ATTR_SWITCH_INFO_REC, "SwitchInfoRecord"},
    {UMAD_SA_ATTR_LINEAR_FT_REC, "LinearForwardingTableRecord"},
    {UMAD_SA_ATTR_RANDOM_FT_REC, "RandomForwardingTableRecord"},
    {UMAD_SA_ATTR_MCAST_FT_REC, "MulticastForwardingTableRecord"},
    {UMAD_SA_ATTR_SM_INFO_REC, "SMInfoRecord"},
    {UMAD_SA_ATTR_LINK_SPD_WIDTH_TABLE_REC, "LinkSpeedWidthPairsTableRecord"},
    {UMAD_SA_ATTR_INFORM_INFO_REC, "InformInfoRecord"},
    {UMAD_SA_ATTR_LINK_REC, "LinkRecord"},
    {UMAD_SA_ATTR_GUID_INFO_REC, "GuidInfoRecord"},
    {UMAD_SA_ATTR_SERVICE_REC, "ServiceRecord"},
    {UMAD_SA_ATTR_PKEY_TABLE_REC, "P_KeyTableRecord"},
    {UMAD_SA_ATTR_PATH_REC, "PathRecord"},
    {UMAD_SA_ATTR_VL_ARB_REC, "VLArbitrationTableRecord"},
    {UMAD_SA_ATTR_MCMEMBER_REC, "MCMemberRecord"},
    {UMAD_SA_ATTR_TRACE_REC, "TraceRecord"},
    {UMAD_SA_ATTR_MULTI_PATH_REC, "MultiPathRecord"},
    {UMAD_SA_ATTR_SERVICE_ASSOC_REC, "ServiceAssociationRecord"},
    {UMAD_SA_ATTR_HIERARCHY_INFO_REC, "HierarchyInfoRecord"},
    {UMAD_SA_ATTR_CABLE_INFO_REC, "CableInfoRecord"},
    {UMAD_SA_ATTR_PORT_INFO_EXT_REC, "PortInfoExtendedRecord"},
};

// Communication Management (IBA 12.6); umad_types.h has no names for them.
constexpr Name kCmAttributes[] = {
    {0x0010, "ConnectRequest"},        {0x0011, "MsgRcptAck"},
    {0x0012, "ConnectReject"},         {0x0013, "ConnectReply"},
    {0x0014, "ReadyToUse"},            {0x0015, "DisconnectRequest"},
    {0x0016, "DisconnectReply"},       {0x0017, "ServiceIDResReq"},
    {0x0018, "ServiceIDResReqResp"},   {0x0019, "LoadAlternatePath"},
    {0x001A, "AlternatePathResponse"}, {0x001B, "SuggestAlternatePath"},
    {0x001C, "SuggestPathResponse"},
};

std::span<const Name> class_attributes(std::uint8_t mgmt_class) {
  switch (mgmt_class) {
    case UMAD_CLASS_SUBN_LID_ROUTED:
    case UMAD_CLASS_SUBN_DIRECTED_ROUTE: return kSmAttributes;
    case UMAD_CLASS_SUBN_ADM: return kSaAttributes;
    case UMAD_CLASS_CM: return kCmAttributes;
    default: return {};
  }
}

// The "SA status" is the class-specific high byte of the MAD status.
constexpr const char* kSaStatus[] = {
    "Success",          "No Resources",  "Request Invalid",         "No Records",
    "Too Many Records", "Invalid GID",   "Insufficient Components", "Request Denied",
    "Priority Suggested",
};

}  // namespace

// Named classes by their names; the vendor ranges 0x09-0x0F and 0x30-0x4F as
// "Vendor"; the rest of the application range 0x10-0x2F as "Application".
IBFAB_UMAD_EXPORT const char* umad_class_str(uint8_t mgmt_class) {
  if (const char* name = find(kClasses, mgmt_class)) return name;
  if ((mgmt_class >= UMAD_CLASS_VENDOR_RANGE1_START && mgmt_class <= UMAD_CLASS_VENDOR_RANGE1_END) ||
      (mgmt_class >= UMAD_CLASS_VENDOR_RANGE2_START && mgmt_class <= UMAD_CLASS_VENDOR_RANGE2_END))
    return "Vendor";
  if (mgmt_class >= UMAD_CLASS_APPLICATION_START && mgmt_class <= UMAD_CLASS_APPLICATION_END)
    return "Application";
  return kUnknown;
}

IBFAB_UMAD_EXPORT const char* umad_method_str(uint8_t mgmt_class, uint8_t method) {
  if (mgmt_class == UMAD_CLASS_SUBN_ADM)
    if (const char* name = find(kSaMethods, method)) return name;
  const char* name = find(kMethods, method);
  return name != nullptr ? name : kUnknownMethod;
}

// attr_id is in network order, as it sits in the MAD header.
IBFAB_UMAD_EXPORT const char* umad_attribute_str(uint8_t mgmt_class, __be16 attr_id) {
  const unsigned id = be16toh(attr_id);
  if (const char* name = find(class_attributes(mgmt_class), id)) return name;
  const char* name = find(kCommonAttributes, id);
  return name != nullptr ? name : kUnknown;
}

// The common status bits (IBA 13.4.7), status in network order: busy wins
// over redirect, which wins over the invalid-field code in bits 2-4; codes
// 4-6 of that field are reserved and, like 0, read "Success". Class-specific
// bits (8-15) are ignored.
IBFAB_UMAD_EXPORT const char* umad_common_mad_status_str(__be16 status) {
  const unsigned value = be16toh(status);
  if ((value & UMAD_STATUS_BUSY) != 0) return "Busy";
  if ((value & UMAD_STATUS_REDIRECT) != 0) return "Redirection required";
  switch (value & UMAD_STATUS_INVALID_FIELD_MASK) {
    case UMAD_STATUS_BAD_VERSION: return "Bad Version";
    case UMAD_STATUS_METHOD_NOT_SUPPORTED: return "Method not supported";
    case UMAD_STATUS_ATTR_NOT_SUPPORTED: return "Method/Attribute combo not supported";
    case UMAD_STATUS_INVALID_ATTR_VALUE: return "Invalid attribute/modifier field";
    default: return "Success";
  }
}

// The SA's class-specific status (IBA 15.2.1.1), status in network order:
// only the high byte counts; codes above 8 read "Undefined Error".
IBFAB_UMAD_EXPORT const char* umad_sa_mad_status_str(__be16 status) {
  const unsigned code = be16toh(status) >> 8;
  return code < std::size(kSaStatus) ? kSaStatus[code] : "Undefined Error";
}
