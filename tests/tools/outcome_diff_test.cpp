// ibfab validate's comparison (tools/validate/outcome_diff.h): records
// matched by step, every field but `raw` compared, the link layer's
// differences agreeing by their named rules and nothing else, and runs
// that are not of the same scenario refused.
#include "tools/validate/outcome_diff.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace ibfab::validate {
namespace {

// A join and a send of scenario "s": the model's (InfiniBand) form unless
// `roce`, whose address handle and MGID are RoCE's.
std::string run_text(bool roce, const std::string& send_status = "success", const std::string& mgid_low = "1") {
  const std::string mgid = roce ? "::ffff:239.0.0." + mgid_low : "ff12:4001:ffff::f00:" + mgid_low;
  std::ostringstream o;
  o << R"({"step":0,"at":"1.000ms","line":9,"host":"H2","action":"join","mgid":"ff12:4001::1","join_state":"full",)"
    << R"("outcome":{"call":{"rc":0,"errno":0},"event":{"type":"RDMA_CM_EVENT_MULTICAST_JOIN","status":0,"mgid":")"
    << mgid << R"(","ah":{"is_global":true,"dlid_set":)" << (roce ? "false" : "true") << R"(,"sl":0,"hop_limit":)"
    << (roce ? "64" : "0") << R"(},"qp_num":"0xffffff","qkey":"0x1234567"},"raw":{"dlid":)" << (roce ? "0" : "49153")
    << R"(}},"ok":true})" << "\n";
  o << R"({"step":1,"at":"2.000ms","line":10,"host":"H1","action":"send","outcome":{"posted":3,"completions":[{"status":")"
    << send_status << R"(","count":3}],"raw":{"elapsed_us":)" << (roce ? "900" : "12") << R"(}},"ok":true})" << "\n";
  o << R"({"summary":{"scenario":"s","steps":2,"failed":0}})" << "\n";
  return o.str();
}

Run parse(const std::string& text, const std::string& name = "run.jsonl") {
  std::istringstream in(text);
  return read_run(in, name);
}

TEST(OutcomeDiff, IdenticalRunsAgreeInEveryStep) {
  const Comparison c = compare(parse(run_text(false)), parse(run_text(false)));
  ASSERT_EQ(c.steps.size(), 2u);
  EXPECT_TRUE(c.all_agree());
  EXPECT_TRUE(c.steps[0].fields.empty());
}

TEST(OutcomeDiff, TheLinkLayersDifferencesAgreeByTheirRulesAndRawIsNotCompared) {
  const Comparison c = compare(parse(run_text(false)), parse(run_text(true)));
  EXPECT_TRUE(c.all_agree());
  ASSERT_EQ(c.steps[0].fields.size(), 3u);
  for (const FieldDiff& f : c.steps[0].fields) EXPECT_NE(f.rule, nullptr) << f.field;
  EXPECT_EQ(c.steps[0].fields[0].field, "outcome.event.ah.dlid_set");
  EXPECT_EQ(c.steps[0].fields[1].field, "outcome.event.ah.hop_limit");
  EXPECT_EQ(c.steps[0].fields[2].field, "outcome.event.mgid");
  EXPECT_TRUE(c.steps[1].fields.empty()) << "raw.elapsed_us differs but is not compared";
}

TEST(OutcomeDiff, AnMgidOfAnotherGroupDisagreesWhateverTheRule) {
  const Comparison c = compare(parse(run_text(false)), parse(run_text(true, "success", "2")));
  EXPECT_FALSE(c.all_agree());
  EXPECT_EQ(c.agreeing(), 1u);
  bool found = false;
  for (const FieldDiff& f : c.steps[0].fields)
    if (f.field == "outcome.event.mgid") {
      found = true;
      EXPECT_EQ(f.rule, nullptr);
      EXPECT_EQ(f.model, "\"ff12:4001:ffff::f00:1\"");
      EXPECT_EQ(f.real, "\"::ffff:239.0.0.2\"");
    }
  EXPECT_TRUE(found);
}

TEST(OutcomeDiff, ADifferentCompletionIsADisagreementWithBothValues) {
  const Comparison c = compare(parse(run_text(false)), parse(run_text(true, "retry exceeded")));
  ASSERT_FALSE(c.steps[1].agrees());
  ASSERT_EQ(c.steps[1].fields.size(), 1u);
  EXPECT_EQ(c.steps[1].fields[0].field, "outcome.completions.0.status");
  EXPECT_EQ(c.steps[1].fields[0].model, "\"success\"");
  EXPECT_EQ(c.steps[1].fields[0].real, "\"retry exceeded\"");
  std::ostringstream out;
  print(c, "s", out);
  EXPECT_NE(out.str().find("step 1 (line 10, H1 send): DISAGREE"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("agreement: 1 of 2 steps (50%)"), std::string::npos) << out.str();
}

// A unicast send without a GRH (step 0: InfiniBand makes the AH, RoCE
// answers EINVAL), then an expect on the receiver that lists the message
// of step 0 on the model only and, when `extra` on the real side too, a
// message of another step. `refused` is the real side's create_ah errno.
std::string unicast_text(bool roce, int refused = 22, bool extra = false) {
  std::ostringstream o;
  o << R"({"step":0,"at":"1.000ms","line":9,"host":"H1","action":"send","to":"H4","grh":false,"count":1,"size":64,)";
  if (roce)
    o << R"("outcome":{"create_ah":{"rc":-1,"errno":)" << refused << R"(}},"ok":false})" << "\n";
  else
    o << R"("outcome":{"create_ah":{"rc":0,"errno":0},"posted":1,"completions":[{"status":"success","count":1}]},"ok":true})"
      << "\n";
  const std::string model_msg = R"({"from":"H1","step":0,"seq":0,"status":"success"})";
  const std::string other_msg = R"({"from":"H2","step":7,"seq":0,"status":"success"})";
  std::string list = roce ? "" : model_msg;
  if (extra) list += (list.empty() ? "" : ",") + other_msg;
  const int received = (roce ? 0 : 1) + (extra ? 1 : 0);
  o << R"({"step":1,"at":"2.000ms","line":10,"host":"H4","action":"expect","outcome":{"expect":1,"received":)" << received
    << R"(,"timed_out":)" << (roce && !extra ? "true" : "false") << R"(,"messages":[)" << list << R"(]},"ok":)"
    << (received == 1 ? "true" : "false") << "}\n";
  o << R"({"summary":{"scenario":"s","steps":2,"failed":0}})" << "\n";
  return o.str();
}

TEST(OutcomeDiff, AStepRuleCoversTheWholeStepAndItsMessagesAreLeftOutLater) {
  const Comparison c = compare(parse(unicast_text(false)), parse(unicast_text(true)));
  EXPECT_TRUE(c.all_agree());
  ASSERT_FALSE(c.steps[0].fields.empty());
  for (const FieldDiff& f : c.steps[0].fields) {
    ASSERT_NE(f.rule, nullptr) << f.field;
    EXPECT_NE(std::string(f.rule).find("without a GRH"), std::string::npos) << f.field;
  }
  // The expect: the model's message of step 0 is left out; its count and
  // list then agree, and ok/timed_out agree by the left-out rule.
  for (const FieldDiff& f : c.steps[1].fields) EXPECT_EQ(f.rule, kLeftOutMessages) << f.field;
}

TEST(OutcomeDiff, AnotherErrnoIsNoStepRuleAndOtherMessagesStillCount) {
  // RoCE refusing with another errno than the rule's is a disagreement.
  EXPECT_FALSE(compare(parse(unicast_text(false)), parse(unicast_text(true, 95))).steps[0].agrees());
  // A message of another step, on one side only, still disagrees.
  const Comparison c = compare(parse(unicast_text(false)), parse(unicast_text(true, 22, true)));
  EXPECT_TRUE(c.steps[0].agrees());
  EXPECT_FALSE(c.steps[1].agrees());
}

TEST(OutcomeDiff, AMessageCountThatIsNoNumberIsRefusedWithItsStep) {
  std::string bad = unicast_text(false);
  const std::string list = R"("messages":[)";
  bad.replace(bad.find(list), list.size(), R"("messages":{"count":"many"},"x":[)");
  try {
    (void)compare(parse(unicast_text(true)), parse(bad));
    ADD_FAILURE() << "not refused";
  } catch (const OutcomeError& e) {
    EXPECT_NE(std::string(e.what()).find("step 1: 'outcome.messages.count' is not a count"), std::string::npos)
        << e.what();
  }
}

// A connect step whose QPs have `mtu` and `timeout`, and `state`.
std::string connect_text(const std::string& mtu, const std::string& timeout, const std::string& state = "IBV_QPS_RTS") {
  std::ostringstream o;
  const std::string qp = R"({"state":")" + state + R"(","retry_cnt":7,"path_mtu":)" + mtu + R"(,"timeout":)" + timeout + "}";
  o << R"({"step":0,"at":"1.000ms","line":9,"host":"H2","action":"connect","to":"H1","outcome":{"qp":{"active":)" << qp
    << R"(,"passive":)" << qp << R"(}},"ok":true})" << "\n";
  o << R"({"summary":{"scenario":"s","steps":1,"failed":0}})" << "\n";
  return o.str();
}

TEST(OutcomeDiff, AConnectionsPathMtuAgreesByRuleButNothingElseOfItsQp) {
  const Comparison c = compare(parse(connect_text("4096", "19")), parse(connect_text("1024", "19")));
  EXPECT_TRUE(c.all_agree());
  ASSERT_EQ(c.steps[0].fields.size(), 2u);
  for (const FieldDiff& f : c.steps[0].fields) EXPECT_NE(f.rule, nullptr) << f.field;
  // An MTU the verbs have not, another ACK timeout, another state: disagreements.
  EXPECT_FALSE(compare(parse(connect_text("4096", "19")), parse(connect_text("1000", "19"))).all_agree());
  EXPECT_FALSE(compare(parse(connect_text("4096", "19")), parse(connect_text("4096", "16"))).all_agree());
  EXPECT_FALSE(compare(parse(connect_text("4096", "19")), parse(connect_text("4096", "19", "IBV_QPS_RTR"))).all_agree());
}

TEST(OutcomeDiff, RunsOfAnotherScenarioOrAnotherLengthAreRefused) {
  std::string other = run_text(true);
  other.replace(other.find("\"scenario\":\"s\""), 14, "\"scenario\":\"t\"");
  EXPECT_THROW(compare(parse(run_text(false)), parse(other)), OutcomeError);
  const std::string one_step = run_text(false).substr(run_text(false).find("{\"step\":1"));
  EXPECT_THROW(parse(one_step), OutcomeError) << "steps must start at 0";
}

TEST(OutcomeDiff, AFileThatIsNoRunNamesItsLine) {
  try {
    parse("{\"step\":0}\nnot json {\n", "x.jsonl");
    FAIL() << "no error";
  } catch (const OutcomeError& e) {
    EXPECT_NE(std::string(e.what()).find("x.jsonl:2:"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse(run_text(false).substr(0, run_text(false).find("{\"summary\""))), OutcomeError)
      << "no summary: not a whole run";
  // Found by fuzz_outcome_records: a key that is no scalar, a summary that
  // is no map.
  for (const char* text : {"{\"step\":0,? [1] : 2}\n", "{\"summary\":5}\n"}) {
    try {
      parse(text, "y.jsonl");
      ADD_FAILURE() << "no error for " << text;
    } catch (const OutcomeError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("y.jsonl:1: ", 0), 0u) << e.what();
    }
  }
}

}  // namespace
}  // namespace ibfab::validate
