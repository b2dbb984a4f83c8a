#!/usr/bin/python3
"""The WebKitGTK floor: a GTK window with one WebKit view showing a small static page.

Any app built on WebKitGTK (Tauri/wry included) pays at least this much memory: the GTK UI
process, the web process and the network process, with the same shared libraries as ours.
bench/app/webkit_floor.sh measures it next to the real app in the same run. Run it with
Debian's /usr/bin/python3 (python3-gi and gir1.2-webkit2-4.1).
"""
import sys

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("WebKit2", "4.1")
from gi.repository import Gtk, WebKit2  # noqa: E402

PAGE = "<!doctype html><html><body><h1>Hello</h1><p>A blank WebKitGTK window.</p></body></html>"


def main() -> None:
    window = Gtk.Window(title="webkit floor")
    window.set_default_size(1100, 760)
    view = WebKit2.WebView()

    def on_load(_view, event):
        if event == WebKit2.LoadEvent.FINISHED:
            print("loaded", flush=True)

    view.connect("load-changed", on_load)
    view.load_html(PAGE, "about:blank")
    window.add(view)
    window.connect("destroy", Gtk.main_quit)
    window.show_all()
    Gtk.main()


if __name__ == "__main__":
    sys.exit(main())
