"""The help layout of the ``berth`` command: click's, with nothing cut.

Click lays option help out at the terminal's width (``COLUMNS``) and wraps it; its command list, though, cuts
each command's summary to what fits on one line ("..."). `HelpGroup` lists each command's whole first
sentence instead, wrapped like the option help.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from typer.core import TyperGroup

# Typer's group is declared with the click types Typer vendors (typer._click); annotations only
if TYPE_CHECKING:
    from typer._click import Context, HelpFormatter

_NO_LIMIT = 1 << 30


class HelpGroup(TyperGroup):
    """A Typer group whose ``--help`` lists every command's full first sentence, wrapped, never cut."""

    def format_commands(self, ctx: Context, formatter: HelpFormatter) -> None:
        """Write the Commands section: name, then the whole summary wrapped to the terminal's width."""
        rows: list[tuple[str, str]] = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is None or command.hidden:
                continue
            rows.append((name, command.get_short_help_str(limit=_NO_LIMIT)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


__all__ = ["HelpGroup"]
