// The live lesson's message parser: arbitrary bytes as a message from a student (first byte
// even) or the teacher (odd), through the same checks the server runs, into a lesson that
// then answers for each student number the bytes name. Whatever was accepted, the state and
// stats the server would send must be JSON that parses back, with the query the teacher set.
#include <cstdint>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "lesson/protocol.hpp"

using namespace headsplit::lesson;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const Role role = (data[0] & 1) ? Role::Teacher : Role::Student;
    const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
    const Incoming m = parse_message(text, role);
    if (m.refusal) {
        if (text.size() > kMaxMessageBytes && *m.refusal != Refusal::TooBig) std::abort();
        return 0;
    }
    if (text.size() > kMaxMessageBytes) std::abort();
    Lesson lesson("text=the%20cat%20sleeps");
    lesson.student_joined();
    if (role == Role::Teacher) {
        if (m.type == "set" || m.type == "ask") {
            if (!lesson.apply_teacher(m)) std::abort();  // a checked set or ask always changes the state
        }
        if (m.query && !valid_query(*m.query)) std::abort();
    } else {
        if (m.type == "set" || m.type == "ask" || m.type == "reveal" || m.type == "close_question") std::abort();
        // A question of the fuzzer's own, then the student's answer to it.
        lesson.apply_teacher(parse_message(R"({"type":"ask","prompt":"?","options":["a","b","c"],"answer":0})",
                                           Role::Teacher));
        if (m.type == "answer") lesson.answer(data[0], m.choice);
        lesson.apply_teacher(parse_message(R"({"type":"reveal"})", Role::Teacher));
    }
    const auto state = nlohmann::json::parse(lesson.state_json());
    const auto stats = nlohmann::json::parse(lesson.stats_json(300));
    if (state["query"] != lesson.query() || stats["seq"] != lesson.seq()) std::abort();
    if (lesson.question() && lesson.question()->revealed) {
        int total = 0;
        for (int c : lesson.counts()) total += c;
        if (total != lesson.answered() || total > 1) std::abort();
    }
    return 0;
}
