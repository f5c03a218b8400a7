// The live lesson's protocol without a network (tests/lesson_test.py runs the server): the
// rate limit on a clock the test holds, the join code and the secret, who may send what, the
// answers counted and never named, and which request paths reach which files of the site.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "lesson/guard.hpp"
#include "lesson/protocol.hpp"
#include "lesson/site.hpp"

using namespace headsplit::lesson;
using nlohmann::json;

namespace {

Incoming teacher(const std::string& text) { return parse_message(text, Role::Teacher); }
Incoming student(const std::string& text) { return parse_message(text, Role::Student); }

std::optional<Refusal> refusal_of(const Incoming& m) { return m.refusal; }

}  // namespace

TEST_CASE("the token bucket takes 20 at once, then 20 a second", "[lesson]") {
    TokenBucket bucket(20, 20);
    for (int i = 0; i < 20; ++i) REQUIRE(bucket.take(100.0));
    CHECK_FALSE(bucket.take(100.0));
    CHECK_FALSE(bucket.take(100.04));  // 0.8 of a token back
    CHECK(bucket.take(100.06));        // 1.2: one
    CHECK_FALSE(bucket.take(100.06));
    // A long pause refills to the burst, not beyond.
    int taken = 0;
    while (bucket.take(1000.0)) ++taken;
    CHECK(taken == 20);
    // A clock that goes back gives nothing.
    CHECK_FALSE(bucket.take(999.0));
}

TEST_CASE("the token bucket says how long until its next token, taking nothing", "[lesson]") {
    TokenBucket bucket(0.5, 2);  // one every 2 s
    CHECK(bucket.wait_s(10.0) == 0);
    CHECK(bucket.full(10.0));
    REQUIRE(bucket.take(10.0));
    CHECK_FALSE(bucket.full(10.0));
    REQUIRE(bucket.take(10.0));
    CHECK(bucket.wait_s(10.0) == Approx(2.0));
    CHECK(bucket.wait_s(11.5) == Approx(0.5));
    CHECK(bucket.wait_s(11.5) == Approx(0.5));  // asking took nothing
    CHECK(bucket.wait_s(12.0) == 0);
    CHECK(bucket.full(14.0));
    // Many at once (bytes): all or none.
    CHECK_FALSE(bucket.take(14.0, 2.5));
    CHECK(bucket.full(14.0));
    CHECK(bucket.take(14.0, 1.5));
    CHECK(bucket.wait_s(14.0) == Approx(1.0));
}

TEST_CASE("wrong codes from one address lock it, right codes and all, until a try is due", "[lesson]") {
    AddressGuard guard(3);
    const std::string a = "192.0.2.7", b = "192.0.2.8";
    const int burst = static_cast<int>(kWrongCodesBurst);
    for (int i = 0; i < burst; ++i) {
        REQUIRE(guard.locked_for(a, 100.0) == 0);
        guard.wrong_code(a, 100.0);
    }
    // The next try, whatever its code, waits for one to be due: kWrongCodeSeconds.
    CHECK(guard.locked_for(a, 100.0) == Approx(kWrongCodeSeconds));
    CHECK(guard.locked_for(a, 100.0 + kWrongCodeSeconds / 2) == Approx(kWrongCodeSeconds / 2));
    CHECK(guard.locked_for(b, 100.0) == 0);  // another address is not held
    CHECK(guard.locked_for(a, 100.0 + kWrongCodeSeconds) == 0);
    guard.wrong_code(a, 100.0 + kWrongCodeSeconds);
    CHECK(guard.locked_for(a, 100.0 + kWrongCodeSeconds) > 0);
    // A guesser's rate, then: one code every kWrongCodeSeconds.
    int tries = 0;
    for (double t = 200.0; t < 200.0 + 60; t += 0.05)
        if (guard.locked_for(a, t) == 0) {
            guard.wrong_code(a, t);
            ++tries;
        }
    CHECK(tries <= burst + static_cast<int>(60 / kWrongCodeSeconds) + 1);
    CHECK(tries >= static_cast<int>(60 / kWrongCodeSeconds));
}

TEST_CASE("wrong codes from many addresses are forgotten once their tries are due again", "[lesson]") {
    AddressGuard guard;
    for (int i = 0; i < 5000; ++i) guard.wrong_code("10.0." + std::to_string(i / 256) + "." + std::to_string(i % 256), i * 0.01);
    // 5000 addresses, one wrong code each, 10 ms apart: at most the last 1024 are remembered
    // whole, with those whose try was not due yet when the others were forgotten.
    CHECK(guard.remembered() <= 1024 + static_cast<std::size_t>(kWrongCodeSeconds / 0.01) + 1);
    CHECK(guard.locked_for("10.0.19.135", 50.0) == 0);
}

TEST_CASE("each address holds at most its share of the class's seats", "[lesson]") {
    AddressGuard guard(2);
    CHECK(guard.take_seat("198.51.100.1"));
    CHECK(guard.take_seat("198.51.100.1"));
    CHECK_FALSE(guard.take_seat("198.51.100.1"));
    CHECK(guard.take_seat("198.51.100.2"));
    CHECK(guard.seats("198.51.100.1") == 2);
    guard.leave_seat("198.51.100.1");
    CHECK(guard.seats("198.51.100.1") == 1);
    CHECK(guard.take_seat("198.51.100.1"));
    guard.leave_seat("203.0.113.9");  // never seated: nothing
    CHECK(guard.seats("203.0.113.9") == 0);
    CHECK(AddressGuard().seats_per_address() == kDefaultSeatsPerAddress);
}

TEST_CASE("a browser's page must come from the address it reached the lesson at", "[lesson]") {
    CHECK(origin_problem("http://192.168.1.20:8080", "192.168.1.20:8080", false).empty());
    CHECK(origin_problem("HTTP://Teacher.LOCAL:8080", "teacher.local:8080", false).empty());
    CHECK(origin_problem("http://192.168.1.20", "192.168.1.20:80", false).empty());
    CHECK(origin_problem("https://192.168.1.20:8443", "192.168.1.20:8443", true).empty());
    CHECK(origin_problem("https://[fe80::1]", "[fe80::1]:443", true).empty());
    // Another site, another port, another scheme, a file or a sandbox (null), no Host.
    const std::string other = origin_problem("https://evil.example", "192.168.1.20:8080", false);
    CHECK(other == "a page from https://evil.example cannot join the lesson at http://192.168.1.20:8080; open the "
                   "student address the teacher gave (http://192.168.1.20:8080/?lesson=CODE)");
    CHECK_FALSE(origin_problem("http://192.168.1.20:8081", "192.168.1.20:8080", false).empty());
    CHECK_FALSE(origin_problem("http://192.168.1.20:8080", "192.168.1.20:8080", true).empty());
    CHECK_FALSE(origin_problem("https://192.168.1.20:8080", "192.168.1.20:8080", false).empty());
    CHECK_FALSE(origin_problem("null", "192.168.1.20:8080", false).empty());
    CHECK_FALSE(origin_problem("file://", "192.168.1.20:8080", false).empty());
    CHECK_FALSE(origin_problem("http://192.168.1.20:8080", "", false).empty());
    CHECK_FALSE(origin_problem("http://192.168.1.20:8080.evil.example", "192.168.1.20:8080", false).empty());
    // What is not printable is shown escaped, and a long origin cut.
    const std::string escaped = origin_problem("http://a\x1b]0;x\x07" "b", "h:1", false);
    CHECK(escaped.find('\x1b') == std::string::npos);
    CHECK(escaped.find("a\\x1b]0;x\\x07b") != std::string::npos);
    CHECK(origin_problem("http://" + std::string(500, 'a'), "h:1", false).size() < 400);
}

TEST_CASE("join codes and teacher secrets are random and spelled plainly", "[lesson]") {
    std::set<std::string> codes;
    for (int i = 0; i < 200; ++i) {
        const std::string code = make_join_code();
        REQUIRE(code.size() == kJoinCodeLength);
        for (char c : code) REQUIRE(kJoinCodeAlphabet.find(c) != std::string_view::npos);
        codes.insert(code);
    }
    CHECK(codes.size() >= 195);
    for (char c : std::string("01ILO")) CHECK(kJoinCodeAlphabet.find(c) == std::string_view::npos);
    const std::string a = make_teacher_secret(), b = make_teacher_secret();
    CHECK(a.size() == 64);
    CHECK(a.find_first_not_of("0123456789abcdef") == std::string::npos);
    CHECK(a != b);
    CHECK(same_secret(a, a));
    CHECK_FALSE(same_secret(a, b));
    CHECK_FALSE(same_secret(a, a.substr(0, 63)));
}

TEST_CASE("the address's query admits a student with the code and the teacher with the secret", "[lesson]") {
    const std::string code = "K7MPQ2", secret = std::string(64, 'a');
    CHECK(admit({{"lesson", "K7MPQ2"}}, code, secret).role == Role::Student);
    CHECK(admit({{"lesson", "k7mpq2"}}, code, secret).role == Role::Student);
    CHECK(admit({{"lesson", code}, {"teacher", secret}}, code, secret).role == Role::Teacher);
    CHECK(admit({{"teacher", secret}}, code, secret).role == Role::Teacher);
    CHECK_FALSE(admit({{"lesson", "K7MPQ3"}}, code, secret).role);
    CHECK_FALSE(admit({{"lesson", ""}}, code, secret).role);
    CHECK_FALSE(admit({}, code, secret).role);
    // A wrong secret is refused, even beside the right code.
    CHECK_FALSE(admit({{"lesson", code}, {"teacher", std::string(64, 'b')}}, code, secret).role);
    CHECK_FALSE(admit({{"teacher", ""}}, code, secret).role);
}

TEST_CASE("students may join, answer and leave; driving is refused", "[lesson]") {
    CHECK_FALSE(student(R"({"type":"join"})").refusal);
    CHECK_FALSE(student(R"({"type":"leave"})").refusal);
    const Incoming a = student(R"({"type":"answer","choice":2})");
    CHECK_FALSE(a.refusal);
    CHECK(a.choice == 2);
    for (const char* drive : {R"({"type":"set","query":"heads=3"})", R"({"type":"reveal"})",
                              R"({"type":"close_question"})", R"({"type":"ask","prompt":"?","options":["a","b"],"answer":0})"})
        CHECK(refusal_of(student(drive)) == Refusal::Driving);
    CHECK(refusal_of(student(R"({"type":"dance"})")) == Refusal::Unknown);
    CHECK(refusal_of(student(R"({"type":"answer","choice":"2"})")) == Refusal::Malformed);
    CHECK(refusal_of(student(R"({"type":"answer"})")) == Refusal::Malformed);
    CHECK(refusal_of(student(R"({"type":"answer","choice":-1})")) == Refusal::BadValue);
    CHECK(refusal_of(student(R"({"type":"answer","choice":99})")) == Refusal::BadValue);
    CHECK(refusal_closes(Refusal::Malformed));
    CHECK_FALSE(refusal_closes(Refusal::Driving));
}

TEST_CASE("malformed and oversized messages are refused before anything is read", "[lesson]") {
    for (const char* bad : {"", "{", "[]", "42", "\"set\"", "{}", R"({"type":3})", R"({"type":null})", "{\"type\":\"join\"}x"}) {
        INFO(bad);
        CHECK(refusal_of(student(bad)) == Refusal::Malformed);
        CHECK(refusal_of(teacher(bad)) == Refusal::Malformed);
    }
    const std::string head = R"({"type":"join","pad":")", tail = "\"}";
    const std::string fits = head + std::string(kMaxMessageBytes - head.size() - tail.size(), 'x') + tail;
    REQUIRE(fits.size() == kMaxMessageBytes);
    CHECK_FALSE(student(fits).refusal);
    CHECK(refusal_of(student(fits + " ")) == Refusal::TooBig);
    // Invalid UTF-8 is malformed JSON.
    CHECK(refusal_of(teacher("{\"type\":\"ask\",\"prompt\":\"\xff\",\"options\":[\"a\",\"b\"],\"answer\":0}")) ==
          Refusal::Malformed);
}

TEST_CASE("the teacher's messages are checked field by field", "[lesson]") {
    const Incoming set = teacher(R"({"type":"set","query":"text=the%20cat%20sleeps&heads=2&step=3&present","paused":true})");
    REQUIRE_FALSE(set.refusal);
    CHECK(*set.query == "text=the%20cat%20sleeps&heads=2&step=3&present");
    CHECK(set.paused == true);
    CHECK_FALSE(set.locked);
    for (const char* q : {"text=the cat", "a#b", "a\"b", "a<b"}) {
        INFO(q);
        CHECK(refusal_of(teacher(json{{"type", "set"}, {"query", q}}.dump())) == Refusal::BadValue);
    }
    CHECK(refusal_of(teacher(json{{"type", "set"}, {"query", std::string(kMaxQueryBytes + 1, 'a')}}.dump())) ==
          Refusal::BadValue);
    CHECK(refusal_of(teacher(R"({"type":"set","paused":"yes"})")) == Refusal::Malformed);
    CHECK(refusal_of(teacher(R"({"type":"ask","prompt":"?","options":["a"],"answer":0})")) == Refusal::BadValue);
    CHECK(refusal_of(teacher(R"({"type":"ask","prompt":"?","options":["a","b"],"answer":2})")) == Refusal::BadValue);
    CHECK(refusal_of(teacher(R"({"type":"ask","prompt":"?","options":["a",3],"answer":0})")) == Refusal::Malformed);
    CHECK(refusal_of(teacher(R"({"type":"ask","prompt":"a\nb","options":["a","b"],"answer":0})")) == Refusal::BadValue);
    CHECK(refusal_of(teacher(R"({"type":"ask","options":["a","b"],"answer":0})")) == Refusal::Malformed);
    CHECK(refusal_of(teacher(R"({"type":"join"})")) == Refusal::Unknown);
}

TEST_CASE("every state message carries the query, the sequence number, the question and the class", "[lesson]") {
    Lesson lesson("text=the%20cat%20sleeps");
    json s = json::parse(lesson.state_json());
    CHECK(s["type"] == "state");
    CHECK(s["query"] == "text=the%20cat%20sleeps");
    CHECK(s["seq"] == 0);
    CHECK(s["question"].is_null());
    CHECK(s["class"]["connected"] == 0);

    CHECK(lesson.apply_teacher(teacher(R"({"type":"set","query":"heads=3&step=7","locked":true})")));
    s = json::parse(lesson.state_json());
    CHECK(s["seq"] == 1);
    CHECK(s["query"] == "heads=3&step=7");
    CHECK(s["locked"] == true);
    CHECK(s["paused"] == false);
    // What changes nothing does not count.
    CHECK_FALSE(lesson.apply_teacher(teacher(R"({"type":"reveal"})")));
    CHECK_FALSE(lesson.apply_teacher(student(R"({"type":"set"})")));
    CHECK(lesson.seq() == 1);
}

TEST_CASE("answers are one per student, changeable until the reveal, counted without names", "[lesson]") {
    Lesson lesson;
    for (int i = 0; i < 4; ++i) lesson.student_joined();
    CHECK_FALSE(lesson.answer(1, 0));  // no question yet
    REQUIRE(lesson.apply_teacher(teacher(R"({"type":"ask","prompt":"shape?","options":["[1, 3, 6]","[1, 2, 3, 3]","[2, 3]"],"answer":1})")));
    json s = json::parse(lesson.state_json());
    CHECK(s["question"]["id"] == 1);
    CHECK(s["question"]["options"].size() == 3);
    CHECK_FALSE(s["question"].contains("answer"));  // not before the reveal
    CHECK_FALSE(s["question"].contains("counts"));

    CHECK(lesson.answer(101, 0));
    CHECK(lesson.answer(102, 1));
    CHECK(lesson.answer(103, 1));
    CHECK(lesson.answer(101, 1));  // changed its mind: still one answer
    CHECK_FALSE(lesson.answer(104, 3));
    CHECK(lesson.answered() == 3);
    CHECK(lesson.counts() == std::vector<int>{0, 3, 0});
    lesson.student_left(103);  // left before the reveal: its answer goes
    CHECK(lesson.counts() == std::vector<int>{0, 2, 0});
    CHECK(lesson.connected() == 3);

    REQUIRE(lesson.apply_teacher(teacher(R"({"type":"reveal"})")));
    CHECK_FALSE(lesson.answer(104, 0));  // too late
    s = json::parse(lesson.state_json());
    CHECK(s["question"]["revealed"] == true);
    CHECK(s["question"]["counts"] == json::array({0, 2, 0}));
    CHECK(s["question"]["answer"] == 1);
    const json stats = json::parse(lesson.stats_json(300));
    CHECK(stats["counts"] == json::array({0, 2, 0}));
    CHECK(stats["answered"] == 2);
    CHECK(stats["connected"] == 3);
    CHECK(stats["max_students"] == 300);
    // Counts only: no student's number appears anywhere.
    for (const std::string& text : {lesson.state_json(), lesson.stats_json(300)})
        for (const char* id : {"101", "102"}) CHECK(text.find(id) == std::string::npos);

    // A new question starts from no answers.
    REQUIRE(lesson.apply_teacher(teacher(R"({"type":"ask","prompt":"again?","options":["a","b"],"answer":0})")));
    CHECK(lesson.answered() == 0);
    CHECK(json::parse(lesson.state_json())["question"]["id"] == 2);
    REQUIRE(lesson.apply_teacher(teacher(R"({"type":"close_question"})")));
    CHECK(json::parse(lesson.state_json())["question"].is_null());
}

TEST_CASE("refusals are counted for the teacher by kind", "[lesson]") {
    Lesson lesson;
    lesson.refuse(Refusal::Driving);
    lesson.refuse(Refusal::Driving);
    lesson.refuse(Refusal::RateLimited);
    lesson.dropped_slow();
    const json stats = json::parse(lesson.stats_json(30));
    CHECK(stats["refused"]["driving"] == 2);
    CHECK(stats["refused"]["rate_limited"] == 1);
    CHECK(stats["refused"]["wrong_code"] == 0);
    CHECK(stats["refused"].size() == kRefusalCount);
    CHECK(stats["dropped_slow"] == 1);
    CHECK(json::parse(refused_json(Refusal::TooBig))["reason"] == "too_big");
    const json locked = json::parse(refused_json(Refusal::TooManyTries, "wait", 2.2));
    CHECK(locked["reason"] == "too_many_tries");
    CHECK(locked["message"] == "wait");
    CHECK(locked["retry_after"] == 3);
    CHECK(json::parse(refused_json(Refusal::Origin, "elsewhere"))["reason"] == "origin");
    CHECK_FALSE(json::parse(refused_json(Refusal::AddressFull, "x")).contains("retry_after"));
    for (Refusal r : {Refusal::TooManyTries, Refusal::AddressFull, Refusal::Origin}) CHECK(refusal_closes(r));
    CHECK(json::parse(full_json(30))["type"] == "full");
    CHECK(json::parse(ended_json())["type"] == "ended");
}

TEST_CASE("only the site's own files are served", "[lesson]") {
    namespace fs = std::filesystem;
    char tmpl[] = "/tmp/headsplit-site-XXXXXX";
    REQUIRE(::mkdtemp(tmpl));
    const fs::path base = tmpl;
    const fs::path site = base / "site";
    fs::create_directories(site / "sub");
    fs::create_directories(site / "empty");
    std::ofstream(site / "index.html") << "<p>page</p>";
    std::ofstream(site / "app.wasm") << "wasm";
    std::ofstream(site / "sub" / "a.js") << "js";
    std::ofstream(site / "sub" / "index.html") << "sub";
    std::ofstream(base / "secret.txt") << "outside";
    fs::create_symlink(base / "secret.txt", site / "out.txt");
    fs::create_symlink(base, site / "outdir");
    fs::create_symlink(site / "sub" / "a.js", site / "alias.js");

    const std::string root = site_root(site.string());
    REQUIRE(root == fs::canonical(site).string());
    CHECK(site_root((base / "secret.txt").string()).empty());
    CHECK(site_root((base / "missing").string()).empty());
    CHECK(site_root("/").empty());

    const auto served = [&](const char* request) -> std::string {
        const auto f = resolve_site_file(root, request);
        return f ? fs::path(f->path).lexically_relative(root).string() : std::string("(refused)");
    };
    CHECK(served("/") == "index.html");
    CHECK(served("/index.html") == "index.html");
    CHECK(served("/sub/a.js") == "sub/a.js");
    CHECK(served("/sub/") == "sub/index.html");
    CHECK(served("/sub") == "sub/index.html");
    CHECK(served("/alias.js") == "sub/a.js");  // a link that stays inside
    CHECK(resolve_site_file(root, "/app.wasm")->content_type == std::string("application/wasm"));
    for (const char* bad : {"/empty", "/empty/", "/missing.js", "/out.txt", "/outdir/secret.txt", "/../secret.txt",
                            "/sub/../index.html", "/./index.html", "/%2e%2e/secret.txt", "/..%2fsecret.txt",
                            "/sub%2fa.js", "//index.html", "/sub\\a.js", "index.html", "", "/a\nb"}) {
        INFO(bad);
        CHECK(served(bad) == "(refused)");
    }
    fs::remove_all(base);
}
