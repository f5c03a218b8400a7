// The lesson server driven from another thread, as the teacher window will drive it: starts a
// lesson::Server on 127.0.0.1 (any free port), prints `port N` and `student QUERY`, then
// posts every line of stdin as a teacher message from this thread. At the end of stdin, four
// threads post messages as fast as they can while this one calls stop(): a post racing the
// stop must be dropped, never reach a destroyed context. tests/lesson_test.py runs it.
#include <atomic>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "lesson/server.hpp"

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: lesson_post_check SITE\n");
        return 2;
    }
    headsplit::lesson::ServerOptions options;
    options.bind = "127.0.0.1";
    options.port = 0;
    options.site = argv[1];
    headsplit::lesson::Server server(options);
    std::cout << "port " << server.port() << "\nstudent lesson=" << server.join_code() << std::endl;
    std::string line;
    int posted = 0;
    while (std::getline(std::cin, line)) {
        server.post_teacher_message(line);
        ++posted;
    }
    std::atomic<bool> go{true};
    std::atomic<long> racing{0};
    std::vector<std::thread> posters;
    for (int t = 0; t < 4; ++t)
        posters.emplace_back([&server, &go, &racing, t] {
            for (long i = 0; go; ++i) {
                // Refused by the service thread (a space in the query): the students' queues
                // stay short, and only the posting and the stop race.
                server.post_teacher_message(R"({"type":"set","query":"step )" + std::to_string(t) + "-" +
                                            std::to_string(i) + R"("})");
                ++racing;
            }
        });
    while (racing < 1000) std::this_thread::yield();
    server.stop();
    go = false;
    for (std::thread& p : posters) p.join();
    std::cout << "posted " << posted << " lines, then stopped with " << racing << " posts racing" << std::endl;
    return 0;
}
