"""``vetbench serve``: the review app in a browser, for annotators who do not live in a terminal.

textual-serve runs a small web server; every browser tab that opens the page gets
its own ``vetbench review`` process, whose screen and keys travel over a
websocket.  The server listens on 127.0.0.1 unless told otherwise (an address other
machines reach only with ``--allow-remote``, and a loud warning), or on a Unix
socket only its owner and group may open (``--socket``: any user of the machine
reaches a 127.0.0.1 port): it has no login of its own, so people elsewhere reach it
through a reverse proxy that authenticates them (README, "The review app in a browser").
"""

from __future__ import annotations

import errno
import ipaddress
import os
import pwd
import shlex
import socket
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

import click

from reviewer.cli.common import fail, given_options, open_db
from reviewer.cli.identity import acting_person

DB_ENV_VAR = "VETBENCH_DB"  # db.engine.DB_ENV_VAR; not imported here to keep --help instant


@click.command()
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on. Keep 127.0.0.1 and put an authenticating reverse proxy in "
    "front: an address other machines reach is refused without --allow-remote.",
)
@click.option(
    "--allow-remote",
    is_flag=True,
    help="Listen on an address other machines reach (--host 0.0.0.0, a LAN address), with no "
    "login: anyone who reaches the port reviews as --as NAME. Prefer a reverse proxy.",
)
@click.option(
    "--port", type=click.IntRange(1, 65535), default=8000, show_default=True, help="Port."
)
@click.option(
    "--as",
    "name",
    default=None,
    metavar="NAME",
    help="Who judges in this app (default: your login name). An unknown name is refused, as "
    "by `review`: register people with `users add`.",
)
@click.option(
    "--public-url",
    metavar="URL",
    default=None,
    help="The address browsers use when a proxy serves the app, e.g. "
    "https://review.example.org/alice; needed with --host 0.0.0.0 [default: "
    "http://HOST:PORT].",
)
@click.option(
    "--allow-origin",
    "allowed_origins",
    metavar="URL",
    multiple=True,
    help="Also let pages from this address open sessions (repeatable), e.g. the reverse "
    "proxy's https://review.example.org. Pages from any other site are refused.",
)
@click.option(
    "--socket",
    "socket_path",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="PATH",
    help="Listen on this Unix socket instead of a port: only you and your group (mode 0660) "
    "may connect, where any user of this machine reaches a 127.0.0.1 port. The proxy "
    "connects to it (nginx: proxy_pass http://unix:PATH:/); needs --public-url.",
)
@click.option(
    "--max-sessions",
    type=click.IntRange(1, 1000),
    default=4,
    show_default=True,
    help="Sessions (browser tabs, each its own process) served at once; more are refused.",
)
@click.pass_context
def serve(
    ctx: click.Context,
    host: str,
    allow_remote: bool,
    port: int,
    name: str | None,
    public_url: str | None,
    allowed_origins: tuple[str, ...],
    socket_path: Path | None,
    max_sessions: int,
) -> None:
    """Serve the review app to a browser (textual-serve); each tab runs its own app.

    Every judgment is stored as in `vetbench review`. Only pages this server serves (or
    --allow-origin names) may open a session, at most --max-sessions at once. Stop the
    server with Ctrl+C.
    """
    from reviewer.cli.guarded_server import GuardedServer, OriginError, origin_of

    for url in (*allowed_origins, *([public_url] if public_url else [])):
        try:
            origin_of(url)
        except OriginError as error:
            fail(f"--allow-origin/--public-url: {error}")
    if socket_path is not None:
        given = list(given_options(ctx, ("host", "allow_remote", "port")).values())
        if given:
            fail(f"--socket listens on a file, not an address: leave out {' and '.join(given)}")
        if public_url is None:
            fail(
                "--socket needs --public-url: the address browsers use through the proxy, "
                "e.g. https://review.example.org/alice"
            )
    listen = ListenHost.resolve(host)  # with --socket, the default 127.0.0.1: unused
    remote = socket_path is None and not listen.loopback
    if remote:
        _check_remote(listen, port, allow_remote=allow_remote, public_url=public_url)
    db = open_db(ctx)  # a bad --db fails here, once, not in every browser tab
    # The same identity rule as `review`, checked once here: an unknown or mistyped name
    # is one line now, not an error page in every browser tab.  Whoever is registered on
    # first use (the first person of an empty database) is checked now, before anything
    # listens (a name the registration would refuse left a socket that had listened), and
    # registered only once the port or socket is ours: a refused serve registers no one.
    acting_person(ctx, name, check_only=True)
    unix_socket = None if socket_path is None else bind_unix_socket(socket_path)
    if unix_socket is None:
        _check_can_listen(host, port)
    try:
        who = acting_person(ctx, name).name
    except BaseException:  # the registration failed: nothing is served, no socket stays
        if unix_socket is not None and socket_path is not None:
            unix_socket.close()
            socket_path.unlink(missing_ok=True)
        raise
    # The apps get the database through the environment, not their command line,
    # where a PostgreSQL password would show in the process list.
    os.environ[DB_ENV_VAR] = db.url.render_as_string(hide_password=False)
    command = shlex.join([sys.executable, "-m", "reviewer.cli", "review", "--as", who])
    if remote:
        _warn_remote(host, port, who)
    server = GuardedServer(
        command,
        host=host,
        port=port,
        title=f"vetbench review · {who}",
        public_url=public_url.rstrip("/") if public_url else listen.url(port),
        allowed_origins=allowed_origins,
        max_sessions=max_sessions,
        unix_socket=unix_socket,
    )
    server.serve()


def bind_unix_socket(path: Path) -> socket.socket:
    """A Unix socket bound at ``path``, mode 0660 from its first moment (the owner and
    their group may connect), or one line: a folder anyone may write (they could put their
    own socket in its place), the path in use by a running server, taken by something that
    is not a socket, or by another user's socket.  A socket of ours that a stopped server
    left behind is replaced."""
    _check_socket_folder(path)
    if path.exists() or path.is_symlink():
        status = path.lstat()
        if not stat.S_ISSOCK(status.st_mode):
            fail(f"cannot listen on {path}: it exists and is not a socket; choose another path")
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            try:
                probe.connect(str(path))
            except OSError:  # nobody answers: left behind by a server that stopped
                pass
            else:
                fail(f"cannot listen on {path}: another server is listening there")
        # Only our own is replaced: another user's file is not ours to remove, even where
        # we could (as root, or in a folder without the sticky bit).
        if status.st_uid != os.geteuid():
            fail(
                f"cannot listen on {path}: a socket of {_user_name(status.st_uid)}'s is there, "
                "not yours to replace; choose another path"
            )
        try:
            path.unlink()
        except OSError as error:  # a folder we may no longer write, a read-only mount
            fail(f"cannot listen on {path}: cannot remove the socket left there: {error.strerror}")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    previous = os.umask(0o117)  # rw for the owner and group, nothing for others
    try:
        listener.bind(str(path))
        # Listening from the moment the file exists: another serve probing it meanwhile
        # must find a server, not a socket it would take for one left behind.
        listener.listen(128)
    except OSError as error:
        listener.close()
        fail(f"cannot listen on {path}: {error.strerror or error}")
    finally:
        os.umask(previous)
    return listener


def _check_socket_folder(path: Path) -> None:
    """Refuse a folder anyone may write without the sticky bit (``/tmp`` has it): anyone
    could remove the socket and put their own in its place, and the proxy would then send
    the annotators' requests, credentials included, to their server."""
    try:
        folder = path.absolute().parent
        mode = folder.stat().st_mode
    except OSError:  # no such folder, no way in: binding there fails in one line
        return
    if mode & stat.S_IWOTH and not mode & stat.S_ISVTX:
        fail(
            f"cannot listen on {path}: anyone may write in {folder} (mode "
            f"{stat.S_IMODE(mode):04o}) and put their own socket in its place; choose a "
            "folder only you and your group may write"
        )


def _user_name(uid: int) -> str:
    """The login name of ``uid``, or the number where it has none."""
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"user {uid}"


@dataclass(frozen=True)
class ListenHost:
    """``--host`` as given and the addresses it listens on, resolved once for every
    question serve asks of it."""

    given: str
    # None of them for a name that does not resolve: listening on it fails later, in one line.
    addresses: tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, ...]

    @classmethod
    def resolve(cls, host: str) -> ListenHost:
        """An address as written, else what the name resolves to (``getaddrinfo``)."""
        try:
            return cls(host, (ipaddress.ip_address(host.strip("[]").split("%")[0]),))
        except ValueError:
            pass
        try:
            found = socket.getaddrinfo(
                host or None, 0, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
            )
        except OSError:
            return cls(host, ())
        return cls(
            host,
            tuple(ipaddress.ip_address(str(address[0]).split("%")[0]) for *_, address in found),
        )

    @property
    def loopback(self) -> bool:
        """Only this machine reaches it (127.0.0.1, ::1, localhost)."""
        return all(address.is_loopback for address in self.addresses)

    @property
    def every_address(self) -> bool:
        """It listens on every address of this machine (0.0.0.0, ::)."""
        return any(address.is_unspecified for address in self.addresses)

    def url(self, port: int) -> str:
        """``http://HOST:PORT``, an IPv6 address in brackets, as a browser writes it."""
        host = self.given
        literal = len(self.addresses) == 1 and str(self.addresses[0]) == host.strip("[]")
        shown = f"[{host.strip('[]')}]" if literal and self.addresses[0].version == 6 else host
        return f"http://{shown}:{port}"


def _check_remote(
    listen: ListenHost, port: int, *, allow_remote: bool, public_url: str | None
) -> None:
    """Refuse an address other machines reach unless --allow-remote says it is meant, and
    a wildcard address without --public-url: no URL of it works in a browser."""
    host = listen.given
    if not allow_remote:
        fail(
            f"--host {host} lets other machines reach the review app with no login: anyone "
            "who reaches the port reviews as --as (sees items and keys, stores judgments in "
            "that name). Keep 127.0.0.1 and put an authenticating reverse proxy in front "
            '(README, "The review app in a browser"), or add --allow-remote if you mean it'
        )
    if public_url is None and listen.every_address:
        fail(
            f"--host {host} listens on every address of this machine, and a browser cannot "
            f"open {listen.url(port)}: add --public-url with the address people "
            f"open, e.g. --public-url http://{socket.gethostname()}:{port}"
        )


def _warn_remote(host: str, port: int, who: str) -> None:
    """Say, loudly and before anything is served, what listening beyond loopback exposes."""
    click.secho(
        f"WARNING: serving on {host}:{port} with no login. Anyone who can reach this port "
        f"reviews as {who}: reads the items and their keys, and stores judgments in {who}'s "
        "name. The Origin check stops other web pages, not other programs. Put an "
        'authenticating reverse proxy in front instead (README, "The review app in a '
        'browser").',
        fg="red",
        bold=True,
        err=True,
    )


def _check_can_listen(host: str, port: int) -> None:
    """Bind HOST:PORT as the server will (address reuse on, as aiohttp sets it) and let go:
    a port in use or an address this machine does not have is one line, before the banner,
    not a traceback after it."""
    try:
        addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        for family, kind, protocol, _, address in addresses:
            with socket.socket(family, kind, protocol) as probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                probe.bind(address)
    except OSError as error:  # gaierror too: a host name that does not resolve
        why = error.strerror or str(error)
        hint = "; choose another with --port" if error.errno == errno.EADDRINUSE else ""
        fail(f"cannot listen on {host}:{port}: {why}{hint}")


COMMANDS: tuple[click.Command, ...] = (serve,)
"""The commands this module adds to the `vetbench` group."""
