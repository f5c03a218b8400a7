#pragma once
// The page in a live lesson (?lesson=CODE, and &teacher=SECRET for the teacher's own page;
// docs/guide.md). The browser's WebSocket, its reconnections and the lesson's marks, buttons
// and question live in web/page_library.js; this side applies the teacher's states and
// reports the teacher's view.
//   A student's page that follows applies each state's query as if its link had been opened:
//   the same checks as the address (page_options), a refused query said in one line and
//   never run. The configuration, the step and presenter mode follow; the text size and the
//   theme stay the student's. While the teacher locks exploring, the page's own stepping and
//   changing input is dropped (LessonView::held) and the mark says so.
//   The teacher's page sends its configuration, step and presenter mode as a query when they
//   change, and its quiz as the window's does: a step asked goes to the class as the lesson's
//   question (the class stays on the step before it), the teacher's answer (1 to 4) reveals
//   it. A teacher's page opened on the lesson's address alone first takes the lesson's state
//   (a reload, a second browser).
#include <optional>
#include <string>

#include "gui/model/state.hpp"
#include "headsplit/io/address.hpp"

namespace headsplit::gui {

class PageLesson {
public:
    // Before the frame's panels: the newest state the page follows, applied; a step that
    // waited for its trace, gone to; whether the teacher's lock holds the page.
    void before_frame(AppState& st, double now);
    // After the frame, with the address's parameters as the page wrote them: the teacher's
    // page tells the lesson its question and its view (the browser side sends the view when
    // it changed).
    void after_frame(AppState& st, const QueryPairs& address);

private:
    void apply(AppState& st, const std::string& query, double now);

    std::optional<int> waiting_step_;       // the state's step, once its trace is in
    const Trace* trace_before_ = nullptr;   // the trace on screen when that trace was asked for
    int ignored_told_ = 0;                  // LessonView::ignored as last told to the browser side
};

// The query the lesson's server takes for `pairs`: percent-encoded, and the characters its
// check refuses (a quote, parentheses) escaped too; parse_query reads it back unchanged.
std::string lesson_query(const QueryPairs& pairs);

}  // namespace headsplit::gui
