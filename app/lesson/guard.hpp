#pragma once
// What one network address may do in a lesson, and where a handshake may come from, without a
// network (the server holds one AddressGuard and calls it from its service thread only):
//   - wrong join codes and teacher secrets: kWrongCodesBurst from one address at once, then
//     one more every kWrongCodeSeconds; past that, every try from that address, right or
//     wrong, is refused until a try is due again (a right code must not tell itself apart
//     while the address is locked, or the lock would not slow a guesser down);
//   - the class's seats: at most `seats_per_address` students from one address (a classroom
//     behind one NAT shares an address, so the setting's default is generous);
//   - the Origin a browser sends with the WebSocket's handshake: the page must come from the
//     address the browser reached the lesson at (the Host it sent); a client that sends no
//     Origin is not a browser, and no Origin check can stop it.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "lesson/protocol.hpp"

namespace headsplit::lesson {

constexpr double kWrongCodesBurst = 20;
constexpr double kWrongCodeSeconds = 3;
constexpr int kDefaultSeatsPerAddress = 60;

class AddressGuard {
public:
    explicit AddressGuard(int seats_per_address = kDefaultSeatsPerAddress);

    // Seconds until `address` may try a code again (0: now). `now_s` as TokenBucket's clock.
    double locked_for(const std::string& address, double now_s);
    // A wrong code or secret from `address`.
    void wrong_code(const std::string& address, double now_s);

    // A student's seat for `address`: false when it holds seats_per_address already.
    bool take_seat(const std::string& address);
    void leave_seat(const std::string& address);
    int seats(const std::string& address) const;
    int seats_per_address() const { return seats_per_address_; }
    // Addresses remembered for their wrong codes (those whose tries are all due again are
    // forgotten once there are many).
    std::size_t remembered() const { return tries_.size(); }

private:
    int seats_per_address_;
    std::unordered_map<std::string, TokenBucket> tries_;
    std::unordered_map<std::string, int> seats_;
};

// Why a WebSocket handshake's Origin is refused, in one line naming it; empty when it is the
// page's own: `scheme://host` (http for ws://, https for wss://) where host is the Host header
// the browser sent, default ports aside, letter case aside.
std::string origin_problem(std::string_view origin, std::string_view host, bool tls);

}  // namespace headsplit::lesson
