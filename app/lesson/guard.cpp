#include "lesson/guard.hpp"

#include <cctype>
#include <cstdio>

namespace headsplit::lesson {

namespace {

// Forgotten once this many addresses are remembered, those whose tries are all due again.
constexpr std::size_t kRememberedAddresses = 1024;

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// `authority` without the scheme's default port.
std::string without_default_port(std::string authority, bool tls) {
    const std::string port = tls ? ":443" : ":80";
    if (authority.size() > port.size() && authority.compare(authority.size() - port.size(), port.size(), port) == 0)
        authority.resize(authority.size() - port.size());
    return authority;
}

// A value from the network, shown: printable ASCII as it is, the rest as \xNN, cut at 120.
std::string shown(std::string_view s) {
    std::string out;
    for (char c : s.substr(0, 120)) {
        const auto u = static_cast<unsigned char>(c);
        if (u >= 0x20 && u < 0x7f) {
            out += c;
        } else {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02x", u);
            out += hex;
        }
    }
    if (s.size() > 120) out += "...";
    return out.empty() ? "\"\"" : out;
}

}  // namespace

AddressGuard::AddressGuard(int seats_per_address) : seats_per_address_(seats_per_address) {}

double AddressGuard::locked_for(const std::string& address, double now_s) {
    const auto t = tries_.find(address);
    return t == tries_.end() ? 0 : t->second.wait_s(now_s);
}

void AddressGuard::wrong_code(const std::string& address, double now_s) {
    if (tries_.size() >= kRememberedAddresses && !tries_.count(address)) {
        for (auto t = tries_.begin(); t != tries_.end();) t = t->second.full(now_s) ? tries_.erase(t) : std::next(t);
    }
    auto t = tries_.try_emplace(address, 1 / kWrongCodeSeconds, kWrongCodesBurst).first;
    t->second.take(now_s);
}

bool AddressGuard::take_seat(const std::string& address) {
    int& n = seats_[address];
    if (n >= seats_per_address_) return false;
    ++n;
    return true;
}

void AddressGuard::leave_seat(const std::string& address) {
    const auto s = seats_.find(address);
    if (s == seats_.end()) return;
    if (--s->second <= 0) seats_.erase(s);
}

int AddressGuard::seats(const std::string& address) const {
    const auto s = seats_.find(address);
    return s == seats_.end() ? 0 : s->second;
}

std::string origin_problem(std::string_view origin, std::string_view host, bool tls) {
    const std::string scheme = tls ? "https://" : "http://";
    const std::string o = lower(origin);
    const std::string lesson = scheme + (host.empty() ? std::string("this machine") : shown(host));
    const bool own = !host.empty() && o.compare(0, scheme.size(), scheme) == 0 &&
                     without_default_port(o.substr(scheme.size()), tls) == without_default_port(lower(host), tls);
    if (own) return {};
    return "a page from " + shown(origin) + " cannot join the lesson at " + lesson +
           "; open the student address the teacher gave (" + lesson + "/?lesson=CODE)";
}

}  // namespace headsplit::lesson
