#pragma once
// The live lesson's protocol, without a network: the lesson's state, the join code and the
// teacher's secret, the checks on every incoming message, the rate limit, and the JSON the
// server sends. The server (lesson/server) owns one Lesson and calls it from its service
// thread only; nothing here locks.
//
// Messages, all JSON text frames of at most kMaxMessageBytes:
//   teacher -> server  {"type":"set","query":"text=...&heads=2&step=3","paused":false,"locked":false}
//                      (each field optional), {"type":"ask","prompt":"...","options":["..",".."],
//                      "answer":1}, {"type":"reveal"}, {"type":"close_question"}
//   student -> server  {"type":"join"} (the current state again), {"type":"answer","choice":0},
//                      {"type":"leave"}
//   server -> all      {"type":"state","seq":N,"query":"...","paused":..,"locked":..,
//                      "question":null|{"id":..,"prompt":..,"options":[..],"revealed":..,
//                      "counts":[..] and "answer":k once revealed},"class":{"connected":..,"answered":..}}
//                      ("class" is as it was when the state was sent: joins and answers do not
//                      send the state again; the teacher's stats follow them)
//   server -> teacher  {"type":"stats",...}: the class, the answers so far, the refusals
//   server -> one      {"type":"refused","reason":"..."}, {"type":"full",...}, {"type":"ended"}
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace headsplit::lesson {

constexpr std::size_t kMaxMessageBytes = 4096;
constexpr std::size_t kMaxQueryBytes = 2048;
constexpr std::size_t kMaxPromptBytes = 512;
constexpr std::size_t kMaxOptionBytes = 128;
constexpr std::size_t kMaxOptions = 8;
constexpr double kStudentMessagesPerSecond = 20;
// The teacher's page may send a change per frame while a slider moves.
constexpr double kTeacherMessagesPerSecond = 200;

enum class Role { Student, Teacher };

// Why a message or a connection was refused. Each is counted for the teacher.
enum class Refusal {
    WrongCode,    // the address held no valid join code or teacher secret: closed
    Driving,      // a student sent a teacher's message: refused, the connection kept
    TooBig,       // over kMaxMessageBytes: closed
    Binary,       // a binary frame: closed
    Malformed,    // not JSON, not an object, no "type", or fields of the wrong kind: closed
    RateLimited,  // over the connection's messages per second: closed
    Unknown,      // a "type" no one sends: refused, kept
    BadValue,     // a known message with a value out of range (an answer with no question): kept
    Full,         // the class is full: closed
    TooManyTries, // the address sent too many wrong codes lately (lesson/guard.hpp): closed
    AddressFull,  // the address holds its share of the class's seats already: closed
    Origin,       // a browser's page from another origin: closed
    Count
};
constexpr std::size_t kRefusalCount = static_cast<std::size_t>(Refusal::Count);
const char* refusal_name(Refusal r);
// Whether the connection is closed after this refusal.
bool refusal_closes(Refusal r);

// A token bucket: `rate` tokens a second, at most `burst` held; the clock is the caller's
// (seconds, any origin, never decreasing), so tests need no timing.
class TokenBucket {
public:
    TokenBucket(double rate, double burst);
    // Takes `n` tokens (false, taking none, when fewer are there).
    bool take(double now_s, double n = 1);
    // What take() would find at `now_s`, taking nothing: the seconds until a token is there
    // (0: one is), and whether the bucket is full again.
    double wait_s(double now_s) const;
    bool full(double now_s) const { return tokens_at(now_s) >= burst_; }

private:
    double tokens_at(double now_s) const;
    double rate_, burst_, tokens_, last_s_ = 0;
    bool started_ = false;
};

// Random text for the lesson's addresses (std::random_device: the kernel's generator).
// The join code: kJoinCodeLength characters without look-alikes (no 0/O, 1/I/L).
constexpr std::size_t kJoinCodeLength = 6;
constexpr std::string_view kJoinCodeAlphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";
std::string make_join_code();
// The teacher's secret: 32 random bytes as 64 hex digits.
std::string make_teacher_secret();
// Equal without an early exit (the time taken does not reveal the common prefix).
bool same_secret(std::string_view a, std::string_view b);

// The parameters of a WebSocket address's query (`lesson=CODE&teacher=SECRET`), as the
// server read them: who is joining, or why not.
struct Admission {
    std::optional<Role> role;  // empty: refused (wrong code)
};
Admission admit(const std::map<std::string, std::string>& params, std::string_view join_code,
                std::string_view teacher_secret);

// A message, checked. `refusal` empty: accepted, and the fields of its type are set.
struct Incoming {
    std::optional<Refusal> refusal;
    std::string type;
    // set
    std::optional<std::string> query;
    std::optional<bool> paused, locked;
    // ask
    std::string prompt;
    std::vector<std::string> options;
    int answer = -1;
    // answer
    int choice = -1;
};
// Checks a text frame from `role`: size first, then JSON, then the type and its fields. A
// query must be a page address's query (printable ASCII, no space, '#' or quote).
Incoming parse_message(std::string_view text, Role role);
bool valid_query(std::string_view query);

struct Question {
    int id = 0;
    std::string prompt;
    std::vector<std::string> options;
    int answer = 0;
    bool revealed = false;
};

// The lesson: what the teacher set, the open question and the class's answers (by an
// anonymous student number, never a name), and the counters.
class Lesson {
public:
    explicit Lesson(std::string initial_query = "");

    // The teacher's messages (already checked by parse_message): true when the state changed
    // (seq went up).
    bool apply_teacher(const Incoming& m);
    // A student's answer to the open question; false (BadValue) when there is none, it is
    // revealed, or the choice is not one of its options.
    bool answer(std::uint64_t student, int choice);
    void student_joined();
    void student_left(std::uint64_t student);
    void refuse(Refusal r) { ++refused_[static_cast<std::size_t>(r)]; }
    void dropped_slow() { ++dropped_slow_; }

    std::uint64_t seq() const { return seq_; }
    const std::string& query() const { return query_; }
    bool paused() const { return paused_; }
    bool locked() const { return locked_; }
    const std::optional<Question>& question() const { return question_; }
    int connected() const { return connected_; }
    int answered() const { return static_cast<int>(answers_.size()); }
    std::vector<int> counts() const;  // per option of the open question
    std::uint64_t refused(Refusal r) const { return refused_[static_cast<std::size_t>(r)]; }

    // The messages, serialized.
    std::string state_json() const;
    std::string stats_json(int max_students) const;

private:
    std::string query_;
    std::uint64_t seq_ = 0;
    bool paused_ = false, locked_ = false;
    std::optional<Question> question_;
    int next_question_id_ = 1;
    std::map<std::uint64_t, int> answers_;
    int connected_ = 0;
    std::array<std::uint64_t, kRefusalCount> refused_{};
    std::uint64_t dropped_slow_ = 0;
};

std::string refused_json(Refusal r);
// With a line for the person at the page, and for TooManyTries the seconds until a try is due.
std::string refused_json(Refusal r, const std::string& message, double retry_after_s = 0);
std::string full_json(int max_students);
std::string ended_json();

}  // namespace headsplit::lesson
