#!/usr/bin/env python3
"""Draws the installed desktop entry as a launcher tile, the way a menu resolves it.

scripts/test-package.sh runs it under Xvfb with the package installed and captures the screen
(docs/screenshots/menu-entry-*.png). Nothing is read from the repository: the entry comes from
Gio's desktop-file lookup (XDG_DATA_DIRS, so /usr/share/applications), the icon from the
default GTK icon theme (hicolor, /usr/share/icons), so a missing or misnamed file shows here as
it would in a menu. Exits 1, naming what is wrong, when the entry or its icon cannot be found.

    python3 packaging/menu-entry-preview.py "Gemini Desktop.desktop" [--dark]
"""

import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gio, GLib, Gtk  # noqa: E402


def main() -> int:
    desktop_id = sys.argv[1]
    dark = "--dark" in sys.argv[2:]
    info = Gio.DesktopAppInfo.new(desktop_id)
    if info is None:
        print(f"menu-entry-preview: no desktop entry {desktop_id!r} on XDG_DATA_DIRS", file=sys.stderr)
        return 1
    settings = Gtk.Settings.get_default()
    settings.set_property("gtk-application-prefer-dark-theme", dark)
    theme = Gtk.IconTheme.get_default()
    icon = info.get_icon()
    sizes = [16, 22, 24, 32, 48, 64, 128, 256, 512]
    # Every size must come from the theme's own directory for it, not a scaled neighbour.
    for size in sizes:
        found = theme.lookup_by_gicon(icon, size, Gtk.IconLookupFlags.FORCE_SIZE)
        if found is None:
            print(f"menu-entry-preview: icon {icon.to_string()!r} not found at {size} px", file=sys.stderr)
            return 1
        print(f"{size:>3} px: {found.get_filename()}")

    window = Gtk.Window(title="Menu entry")
    window.set_default_size(560, 320)
    window.move(0, 0)
    outer = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=14, margin=24)
    window.add(outer)

    heading = Gtk.Label(xalign=0)
    heading.set_markup(f"<small>Installed desktop entry <tt>{GLib.markup_escape_text(info.get_filename())}</tt></small>")
    outer.pack_start(heading, False, False, 0)

    tile = Gtk.Box(orientation=Gtk.Orientation.HORIZONTAL, spacing=18)
    tile.pack_start(_image(theme, icon, 96), False, False, 0)
    text = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6, valign=Gtk.Align.CENTER)
    name = Gtk.Label(xalign=0)
    name.set_markup(f"<span size='x-large' weight='bold'>{GLib.markup_escape_text(info.get_name())}</span>")
    comment = Gtk.Label(label=info.get_description() or "(no Comment)", xalign=0)
    categories = Gtk.Label(xalign=0)
    categories.set_markup(f"<small>Categories: {GLib.markup_escape_text(info.get_categories() or '(none)')}</small>")
    command = Gtk.Label(xalign=0)
    command.set_markup(f"<small>Exec: <tt>{GLib.markup_escape_text(info.get_commandline() or '')}</tt></small>")
    for label in (name, comment, categories, command):
        text.pack_start(label, False, False, 0)
    tile.pack_start(text, True, True, 0)
    outer.pack_start(tile, False, False, 0)

    # The small sizes, as panels and menus draw them (each from its own hicolor directory).
    row = Gtk.Box(orientation=Gtk.Orientation.HORIZONTAL, spacing=12, valign=Gtk.Align.END)
    for size in sizes[:6]:
        cell = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=2, valign=Gtk.Align.END)
        cell.pack_start(_image(theme, icon, size), False, False, 0)
        cell.pack_start(Gtk.Label(label=f"{size} px"), False, False, 0)
        row.pack_start(cell, False, False, 0)
    outer.pack_start(row, False, False, 0)

    window.connect("destroy", Gtk.main_quit)
    window.show_all()
    Gtk.main()
    return 0


def _image(theme: Gtk.IconTheme, icon: Gio.Icon, size: int) -> Gtk.Image:
    pixbuf = theme.lookup_by_gicon(icon, size, Gtk.IconLookupFlags.FORCE_SIZE).load_icon()
    return Gtk.Image.new_from_pixbuf(pixbuf)


if __name__ == "__main__":
    sys.exit(main())
