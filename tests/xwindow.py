"""An application's X window driven as a user drives it, for the window tests (inside
xvfb-run, python3-xlib): found by its process, keys through XTest, closed by the window
manager's message."""
import time

from Xlib import X, XK, protocol
from Xlib.ext import xtest


def find_window(d, pid, timeout):
    """The top-level window whose _NET_WM_PID is `pid` (GLFW sets it), once it is mapped."""
    pid_atom = d.intern_atom("_NET_WM_PID")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for w in d.screen().root.query_tree().children:
            try:
                prop = w.get_full_property(pid_atom, X.AnyPropertyType)
                if prop and prop.value and prop.value[0] == pid and w.get_attributes().map_state == X.IsViewable:
                    return w
            except Exception:  # a window that went away meanwhile
                pass
        time.sleep(0.2)
    return None


def wait_drawn(w, timeout):
    """Waits until the window shows its panels and stands still (two grabs 0.3 s apart alike,
    more than one colour in them): a loaded machine draws the first frames late. Returns
    whether it did within `timeout` seconds."""
    g = w.get_geometry()
    deadline, before = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        try:
            data = w.get_image(0, 0, g.width, g.height, X.ZPixmap, 0xFFFFFFFF).data
        except Exception:  # not viewable yet
            data = None
        if data is not None and data == before and len(set(data[i:i + 4] for i in range(0, len(data), 4 * 97))) > 4:
            return True
        before = data
        time.sleep(0.3)
    return False


def press(d, w, name):
    """A key's press and release (an X keysym name: "Right", "h", "F12"), `w` holding the keyboard."""
    w.set_input_focus(X.RevertToParent, X.CurrentTime)
    code = d.keysym_to_keycode(XK.string_to_keysym(name))
    xtest.fake_input(d, X.KeyPress, code)
    d.sync()
    time.sleep(0.15)
    xtest.fake_input(d, X.KeyRelease, code)
    d.sync()
    time.sleep(0.15)


def close(d, w):
    """The window manager's close: a WM_PROTOCOLS client message naming WM_DELETE_WINDOW."""
    protocols, delete = d.intern_atom("WM_PROTOCOLS"), d.intern_atom("WM_DELETE_WINDOW")
    ev = protocol.event.ClientMessage(window=w, client_type=protocols, data=(32, [delete, X.CurrentTime, 0, 0, 0]))
    w.send_event(ev, event_mask=X.NoEventMask)
    d.flush()
