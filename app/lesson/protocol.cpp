#include "lesson/protocol.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <random>

#include <nlohmann/json.hpp>

namespace headsplit::lesson {

namespace {

using nlohmann::json;

constexpr const char* kRefusalNames[] = {"wrong_code", "driving", "too_big", "binary", "malformed",
                                         "rate_limited", "unknown", "bad_value", "full",
                                         "too_many_tries", "address_full", "origin"};
static_assert(std::size(kRefusalNames) == kRefusalCount, "one name per Refusal");

// The teacher's message types; a student sending one is driving.
bool is_teacher_type(std::string_view t) {
    return t == "set" || t == "ask" || t == "reveal" || t == "close_question";
}

Incoming refused(Refusal r) {
    Incoming m;
    m.refusal = r;
    return m;
}

bool printable_text(std::string_view s) {
    // UTF-8 is welcome in prompts and options; control characters are not.
    return std::none_of(s.begin(), s.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u < 0x20 || u == 0x7f;
    });
}

std::string random_text(std::string_view alphabet, std::size_t length) {
    std::random_device rd;
    std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
    std::string out;
    for (std::size_t i = 0; i < length; ++i) out += alphabet[pick(rd)];
    return out;
}

std::string upper(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return out;
}

}  // namespace

const char* refusal_name(Refusal r) { return kRefusalNames[static_cast<std::size_t>(r)]; }

bool refusal_closes(Refusal r) {
    return r != Refusal::Driving && r != Refusal::Unknown && r != Refusal::BadValue;
}

TokenBucket::TokenBucket(double rate, double burst) : rate_(rate), burst_(burst), tokens_(burst) {}

bool TokenBucket::take(double now_s, double n) {
    tokens_ = tokens_at(now_s);
    if (!started_ || now_s > last_s_) last_s_ = now_s;
    started_ = true;
    if (tokens_ < n) return false;
    tokens_ -= n;
    return true;
}

double TokenBucket::tokens_at(double now_s) const {
    return started_ && now_s > last_s_ ? std::min(burst_, tokens_ + (now_s - last_s_) * rate_) : tokens_;
}

double TokenBucket::wait_s(double now_s) const {
    const double tokens = tokens_at(now_s);
    return tokens >= 1 ? 0 : (1 - tokens) / rate_;
}

std::string make_join_code() { return random_text(kJoinCodeAlphabet, kJoinCodeLength); }

std::string make_teacher_secret() { return random_text("0123456789abcdef", 64); }

bool same_secret(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    unsigned char diff = 0;
    for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
    return diff == 0;
}

Admission admit(const std::map<std::string, std::string>& params, std::string_view join_code,
                std::string_view teacher_secret) {
    Admission a;
    if (const auto t = params.find("teacher"); t != params.end()) {
        if (!teacher_secret.empty() && same_secret(t->second, teacher_secret)) a.role = Role::Teacher;
        return a;  // a wrong secret is refused even with the right code
    }
    if (const auto c = params.find("lesson"); c != params.end()) {
        if (!join_code.empty() && same_secret(upper(c->second), upper(join_code))) a.role = Role::Student;
    }
    return a;
}

bool valid_query(std::string_view query) {
    if (query.size() > kMaxQueryBytes) return false;
    return std::all_of(query.begin(), query.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u > 0x20 && u < 0x7f && c != '#' && c != '"' && c != '\'' && c != '<' && c != '>' && c != '\\' &&
               c != '`';
    });
}

Incoming parse_message(std::string_view text, Role role) {
    if (text.size() > kMaxMessageBytes) return refused(Refusal::TooBig);
    json doc = json::parse(text.begin(), text.end(), nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) return refused(Refusal::Malformed);
    const auto type = doc.find("type");
    if (type == doc.end() || !type->is_string()) return refused(Refusal::Malformed);
    Incoming m;
    m.type = type->get<std::string>();
    if (role == Role::Student) {
        if (is_teacher_type(m.type)) return refused(Refusal::Driving);
        if (m.type == "join" || m.type == "leave") return m;
        if (m.type == "answer") {
            const auto choice = doc.find("choice");
            if (choice == doc.end() || !choice->is_number_integer()) return refused(Refusal::Malformed);
            const auto c = choice->get<std::int64_t>();
            if (c < 0 || c >= static_cast<std::int64_t>(kMaxOptions)) return refused(Refusal::BadValue);
            m.choice = static_cast<int>(c);
            return m;
        }
        return refused(Refusal::Unknown);
    }
    if (m.type == "set") {
        if (const auto q = doc.find("query"); q != doc.end()) {
            if (!q->is_string()) return refused(Refusal::Malformed);
            m.query = q->get<std::string>();
            if (!valid_query(*m.query)) return refused(Refusal::BadValue);
        }
        for (const auto& [key, field] : {std::pair{"paused", &m.paused}, std::pair{"locked", &m.locked}}) {
            if (const auto b = doc.find(key); b != doc.end()) {
                if (!b->is_boolean()) return refused(Refusal::Malformed);
                *field = b->get<bool>();
            }
        }
        return m;
    }
    if (m.type == "ask") {
        const auto prompt = doc.find("prompt");
        const auto options = doc.find("options");
        const auto answer = doc.find("answer");
        if (prompt == doc.end() || !prompt->is_string() || options == doc.end() || !options->is_array() ||
            answer == doc.end() || !answer->is_number_integer())
            return refused(Refusal::Malformed);
        m.prompt = prompt->get<std::string>();
        if (m.prompt.size() > kMaxPromptBytes || !printable_text(m.prompt)) return refused(Refusal::BadValue);
        if (options->size() < 2 || options->size() > kMaxOptions) return refused(Refusal::BadValue);
        for (const auto& o : *options) {
            if (!o.is_string()) return refused(Refusal::Malformed);
            m.options.push_back(o.get<std::string>());
            if (m.options.back().size() > kMaxOptionBytes || !printable_text(m.options.back()))
                return refused(Refusal::BadValue);
        }
        const auto a = answer->get<std::int64_t>();
        if (a < 0 || a >= static_cast<std::int64_t>(m.options.size())) return refused(Refusal::BadValue);
        m.answer = static_cast<int>(a);
        return m;
    }
    if (m.type == "reveal" || m.type == "close_question") return m;
    return refused(Refusal::Unknown);
}

Lesson::Lesson(std::string initial_query) : query_(std::move(initial_query)) {}

bool Lesson::apply_teacher(const Incoming& m) {
    if (m.refusal) return false;
    if (m.type == "set") {
        if (m.query) query_ = *m.query;
        if (m.paused) paused_ = *m.paused;
        if (m.locked) locked_ = *m.locked;
    } else if (m.type == "ask") {
        question_ = Question{next_question_id_++, m.prompt, m.options, m.answer, false};
        answers_.clear();
    } else if (m.type == "reveal") {
        if (!question_ || question_->revealed) return false;
        question_->revealed = true;
    } else if (m.type == "close_question") {
        if (!question_) return false;
        question_.reset();
        answers_.clear();
    } else {
        return false;
    }
    ++seq_;
    return true;
}

bool Lesson::answer(std::uint64_t student, int choice) {
    if (!question_ || question_->revealed || choice < 0 || choice >= static_cast<int>(question_->options.size()))
        return false;
    answers_[student] = choice;
    return true;
}

void Lesson::student_joined() { ++connected_; }

void Lesson::student_left(std::uint64_t student) {
    if (connected_ > 0) --connected_;
    if (!question_ || !question_->revealed) answers_.erase(student);
}

std::vector<int> Lesson::counts() const {
    std::vector<int> out(question_ ? question_->options.size() : 0, 0);
    for (const auto& [student, choice] : answers_)
        if (choice >= 0 && choice < static_cast<int>(out.size())) ++out[static_cast<std::size_t>(choice)];
    return out;
}

std::string Lesson::state_json() const {
    json q = nullptr;
    if (question_) {
        q = {{"id", question_->id}, {"prompt", question_->prompt}, {"options", question_->options},
             {"revealed", question_->revealed}};
        if (question_->revealed) {
            q["counts"] = counts();
            q["answer"] = question_->answer;
        }
    }
    const json doc = {{"type", "state"},     {"seq", seq_},       {"query", query_},
                      {"paused", paused_},   {"locked", locked_}, {"question", q},
                      {"class", {{"connected", connected_}, {"answered", answered()}}}};
    return doc.dump();
}

std::string Lesson::stats_json(int max_students) const {
    json refusals = json::object();
    for (std::size_t i = 0; i < kRefusalCount; ++i) refusals[kRefusalNames[i]] = refused_[i];
    json doc = {{"type", "stats"},
                {"seq", seq_},
                {"connected", connected_},
                {"max_students", max_students},
                {"answered", answered()},
                {"refused", refusals},
                {"dropped_slow", dropped_slow_}};
    doc["question_id"] = question_ ? question_->id : 0;
    if (question_ && question_->revealed) {
        doc["counts"] = counts();
        doc["answer"] = question_->answer;
    }
    return doc.dump();
}

std::string refused_json(Refusal r) { return json{{"type", "refused"}, {"reason", refusal_name(r)}}.dump(); }

std::string refused_json(Refusal r, const std::string& message, double retry_after_s) {
    json doc = {{"type", "refused"}, {"reason", refusal_name(r)}, {"message", message}};
    if (retry_after_s > 0) doc["retry_after"] = std::ceil(retry_after_s);
    return doc.dump();
}

std::string full_json(int max_students) {
    return json{{"type", "full"}, {"max_students", max_students}, {"message", "the class is full"}}.dump();
}

std::string ended_json() { return json{{"type", "ended"}, {"message", "the lesson has ended"}}.dump(); }

}  // namespace headsplit::lesson
