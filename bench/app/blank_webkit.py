#!/usr/bin/python3
"""The WebKitGTK floor: a GTK window with one WebKit view showing a small static page.

Any app built on WebKitGTK (Tauri/wry included) pays at least this much memory: the GTK UI
process, the web process and the network process, with the same shared libraries as ours.
bench/app/webkit_floor.sh measures it next to the real app in the same run. Run it with
Debian's /usr/bin/python3 (python3-gi and gir1.2-webkit2-4.1).
"""
import os
import sys
import time

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("WebKit2", "4.1")
from gi.repository import Gtk, WebKit2  # noqa: E402


def since_start() -> float:
    """Seconds since this process started (its /proc start time, on CLOCK_BOOTTIME, the clock
    the app benchmark times the app with)."""
    with open("/proc/self/stat") as stat:
        start_ticks = int(stat.read().rsplit(")", 1)[1].split()[19])
    return time.clock_gettime(time.CLOCK_BOOTTIME) - start_ticks / os.sysconf("SC_CLK_TCK")


PAGE = "<!doctype html><html><body><h1>Hello</h1><p>A blank WebKitGTK window.</p></body></html>"


def main() -> None:
    window = Gtk.Window(title="webkit floor")
    window.set_default_size(1100, 760)
    view = WebKit2.WebView()

    def on_load(_view, event):
        # The page is parsed and laid out: its content is what the next frame shows. The app's
        # benchmark reads this line (start → content of a window that has nothing to load).
        if event == WebKit2.LoadEvent.FINISHED:
            sys.stdout.write(f"content {since_start():.4f}\n")  # one write: the pipe is shared
            sys.stdout.flush()

    view.connect("load-changed", on_load)
    view.load_html(PAGE, "about:blank")
    window.add(view)
    window.connect("destroy", Gtk.main_quit)
    window.show_all()
    Gtk.main()


if __name__ == "__main__":
    sys.exit(main())
