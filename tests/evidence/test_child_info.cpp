// How a child ended, as the report records it: the runner's outcome made into
// report::ChildInfo, its text valid UTF-8 whatever bytes the program wrote.
#include <catch2/catch.hpp>

#include "evidence/child_info.h"

using namespace cudadiag;

TEST_CASE("child info: a child's excerpts are valid UTF-8 in the report", "[child_info]") {
  runner::ChildOutcome o;
  o.pid = 4242;
  o.ending = runner::Ending::exit_code;
  o.exit_code = 1;
  o.out.head = std::string("ok \xff\xfe bytes\n");
  o.out.total_bytes = o.out.head.size();
  o.err.head = "head";
  o.err.tail = "tail";
  o.err.total_bytes = 100;
  o.err.dropped_bytes = 92;
  const auto info = evidence::child_info(o);
  CHECK(info.pid == 4242);
  CHECK(info.ending == runner::Ending::exit_code);
  CHECK(report::to_json(info).at("ending").get<std::string>() == "exit");
  CHECK(info.exit_code == 1);
  CHECK_FALSE(info.signal);
  CHECK(info.stdout_excerpt.text.find('\xff') == std::string::npos);
  CHECK(info.stdout_excerpt.text.rfind("ok ", 0) == 0);
  CHECK(info.stdout_excerpt.total_bytes == o.out.head.size());
  CHECK(info.stderr_excerpt.text == o.err.text());
  CHECK(info.stderr_excerpt.dropped_bytes == 92);
  CHECK_NOTHROW(report::to_json(info).dump());
}

TEST_CASE("child info: a signal and the processes it left behind are named", "[child_info]") {
  runner::ChildOutcome o;
  o.pid = 10;
  o.ending = runner::Ending::timeout;
  o.signal = 9;
  o.signal_name = "SIGKILL";
  o.killed_after_grace = true;
  runner::StrayProcess stray;
  stray.pid = 11;
  stray.command = "worker\xff";
  stray.left_group = true;
  stray.left_session = true;
  o.strays.push_back(stray);
  o.strays_unnamed = 3;
  const auto info = evidence::child_info(o);
  CHECK(info.ending == runner::Ending::timeout);
  CHECK(info.signal == 9);
  CHECK(info.signal_name == "SIGKILL");
  CHECK(info.killed_after_grace);
  REQUIRE(info.strays.size() == 1);
  CHECK(info.strays[0].pid == 11);
  CHECK(info.strays[0].command.find('\xff') == std::string::npos);
  CHECK(info.strays[0].note == "left the process group and session; killed at the end of the run");
  CHECK(info.strays_unnamed == 3);
  const auto j = report::to_json(info);
  CHECK(j["ending"] == "timeout");
  CHECK(j["strays"][0]["note"] == stray.note());
  CHECK(j["strays_unnamed"] == 3);
}
