#!/usr/bin/python3
# The real Patchwork (../shared/patchwork/) set up for tests/aggregator/patchwork.t, run as
# `patchwork-admin.py DIR COMMAND ...` with DIR a folder of its own (the settings module and
# the SQLite database go there) and Debian's Django:
#   settings DIR                       writes DIR/bootci_pw_settings.py
#   setup DIR PROJECT LISTID           tables (from the models), states and tags, the project,
#                                      a maintainer "ci" and a plain user "visitor": prints
#                                      "TOKEN_OF_CI TOKEN_OF_VISITOR"
#   parse DIR MBOX...                  mails the messages in, as a list would (parse_mail)
#   api-checks URL SERIES              the same read through the REST API (URL: Patchwork's base),
#                                      as a CI's user would: "PATCH_NUMBER CONTEXT STATE USER URL"
#   api-times URL SERIES               from the REST API: when the series was complete (its
#                                      patches' latest date) and when its last patch got
#                                      bootci-fast pending, Unix seconds ("-": not there), its
#                                      patches and how many have pending
#   wait-pending URL SERIES TIMEOUT    the same API read until every patch of SERIES has
#                                      bootci-fast pending: "SEEN PATCHWORK_DATE" (Unix seconds:
#                                      when this reader saw them all, Patchwork's date of the last)
#   fake PORT_FILE MODE                a stand-in that answers like a broken Patchwork on
#                                      127.0.0.1 (its port written to PORT_FILE): MODE 500 (every
#                                      listing a 500), garbage (HTML where JSON belongs), nombox (a
#                                      complete series without an mbox, another whose mbox is 404),
#                                      lost (a series whose checks Patchwork keeps but whose first
#                                      answer per patch is a 500, as when an answer is lost; GET
#                                      /posts counts the POSTs per patch), pages (six complete
#                                      series, two a page newest first, the next page in the Link
#                                      header; GET /pages counts the listing pages read), endless
#                                      (the same with a next page always), badmsgid (a complete
#                                      series whose Message-ID is no <left@right>)
# One Python process per command: Patchwork's start is most of what a command costs.
import mailbox
import os
import sys


def settings(folder):
    with open(os.path.join(folder, 'bootci_pw_settings.py'), 'w') as f:
        f.write(f'''from patchwork.settings.base import *  # noqa
SECRET_KEY = 'bootci-test-only'
DEBUG = True
ALLOWED_HOSTS = ['127.0.0.1', 'localhost']
# A writer (parse) waits for the server's readers instead of failing at once.
DATABASES = {{'default': {{'ENGINE': 'django.db.backends.sqlite3',
                          'NAME': {os.path.join(folder, 'patchwork.sqlite')!r},
                          'OPTIONS': {{'timeout': 60}}}}}}
ENABLE_REST_API = True
EMAIL_BACKEND = 'django.core.mail.backends.console.EmailBackend'
PASSWORD_HASHERS = ['django.contrib.auth.hashers.MD5PasswordHasher']
# Tables from the models (migrate --run-syncdb): a third of the migrations' time.
MIGRATION_MODULES = {{app.rsplit('.', 1)[-1]: None for app in INSTALLED_APPS}}
''')


def django_up():
    import django
    django.setup()


def setup(project, listid):
    from django.core.management import call_command
    from django.contrib.auth.models import User
    from rest_framework.authtoken.models import Token
    from patchwork.models import Project

    from django.db import connection

    call_command('migrate', run_syncdb=True, verbosity=0, interactive=False)
    # Readers (the server's answers to the polls) and a writer (parse) at once.
    with connection.cursor() as cursor:
        cursor.execute('PRAGMA journal_mode=WAL')
    call_command('loaddata', 'default_tags', 'default_states', verbosity=0)
    p = Project.objects.create(linkname=project, name=project, listid=listid,
                               listemail=listid.replace('.', '@', 1))
    ci = User.objects.create_user('ci', 'ci@bootci.test', 'ci-password')
    ci.profile.maintainer_projects.add(p)
    visitor = User.objects.create_user('visitor', 'visitor@bootci.test', 'visitor-password')
    print(Token.objects.create(user=ci).key, Token.objects.create(user=visitor).key)


def parse(paths):
    from patchwork.parser import parse_mail

    for path in paths:
        for message in mailbox.mbox(path, create=False):
            if not parse_mail(message):
                sys.exit(f'patchwork-admin.py: {path}: {message["Message-Id"]} dropped')


def checks(series_id):
    from patchwork.models import Series

    series = Series.objects.get(id=int(series_id))
    for number, patch in enumerate(series.patches.order_by('id'), 1):
        for check in patch.check_set.order_by('id'):
            print(number, check.context, check.get_state_display(), check.user.username,
                  check.target_url or '-', check.description or '-')


def api_checks(base, series_id):
    import json
    import urllib.request

    def get(url):
        with urllib.request.urlopen(url) as answer:
            return json.load(answer)

    series = get(f'{base}/api/1.2/series/{series_id}/')
    for number, patch in enumerate(sorted(series['patches'], key=lambda p: p['id']), 1):
        for check in get(f'{base}/api/1.2/patches/{patch["id"]}/checks/?per_page=100'):
            print(number, check['context'], check['state'], check['user']['username'],
                  check['target_url'] or '-')


def api_times(base, series_id):
    """When the series was complete (the latest date of its patches) and when the last of its
    patches got its bootci-fast pending check, as Unix seconds read from the REST API
    (Patchwork's dates are UTC without a zone); then how many patches it has and how many
    carry that check: "COMPLETE PENDING PATCHES WITH_PENDING" ("-" for a time not there)."""
    import calendar
    import datetime
    import json
    import urllib.request

    def get(url):
        with urllib.request.urlopen(url) as answer:
            return json.load(answer)

    def unix(text):
        d = datetime.datetime.fromisoformat(text)
        return calendar.timegm(d.timetuple()) + d.microsecond / 1e6

    series = get(f'{base}/api/1.2/series/{series_id}/')
    complete = max(unix(p['date']) for p in series['patches']) if series['patches'] else None
    pending = []
    for patch in series['patches']:
        dates = [unix(c['date']) for c in get(f'{base}/api/1.2/patches/{patch["id"]}/checks/?per_page=100')
                 if c['context'] == 'bootci-fast' and c['state'] == 'pending']
        if dates:
            pending.append(min(dates))
    last = max(pending) if len(pending) == len(series['patches']) and pending else None
    print('-' if complete is None else f'{complete:.6f}', '-' if last is None else f'{last:.6f}',
          len(series['patches']), len(pending))


def wait_pending(base, series_id, timeout):
    """Reads the series' patches' checks through the REST API until every patch has bootci-fast
    pending (or TIMEOUT seconds): prints when this reader first saw them all (this host's clock)
    and Patchwork's own date of the last one, Unix seconds; exit 1 at the timeout."""
    import calendar
    import datetime
    import json
    import time
    import urllib.request

    def get(url):
        with urllib.request.urlopen(url) as answer:
            return json.load(answer)

    deadline = time.time() + float(timeout)
    patches = [p['id'] for p in get(f'{base}/api/1.2/series/{series_id}/')['patches']]
    dated = {}
    while time.time() < deadline:
        for patch in patches:
            if patch in dated:
                continue
            for c in get(f'{base}/api/1.2/patches/{patch}/checks/?per_page=100'):
                if c['context'] == 'bootci-fast' and c['state'] == 'pending':
                    d = datetime.datetime.fromisoformat(c['date'])
                    dated[patch] = calendar.timegm(d.timetuple()) + d.microsecond / 1e6
        if len(dated) == len(patches):
            print(f'{time.time():.6f} {max(dated.values()):.6f}')
            return
        time.sleep(0.2)
    sys.exit(f'patchwork-admin.py: series {series_id}: {len(dated)} of {len(patches)} patches'
             f' with pending after {timeout} s')


def fake(port_file, mode):
    import http.server
    import json
    import urllib.parse

    kept = {}    # patch id: [(context, state)], the checks Patchwork holds
    posts = {}   # patch id: POSTs received
    pages = []   # the listing pages read, by number

    class Handler(http.server.BaseHTTPRequestHandler):
        def answer(self, status, body, kind='application/json'):
            data = body.encode()
            self.send_response(status)
            self.send_header('Content-Type', kind)
            self.send_header('Content-Length', str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_PATCH(self):
            self.rfile.read(int(self.headers.get('Content-Length', 0)))
            self.answer(200, '{}')

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get('Content-Length', 0))))
            patch = self.path.split('/')[4]
            kept.setdefault(patch, []).append((body['context'], body['state']))
            posts[patch] = posts.get(patch, 0) + 1
            if posts[patch] == 1:
                self.answer(500, '<h1>Server Error (500)</h1>', 'text/html')
            else:
                self.answer(201, json.dumps(body))

        def do_GET(self):
            base = f'http://127.0.0.1:{self.server.server_port}'
            if self.path == '/posts':
                self.answer(200, json.dumps(posts, sort_keys=True))
            elif self.path == '/pages':
                self.answer(200, json.dumps(pages))
            elif mode in ('pages', 'endless') and self.path.startswith('/api/1.2/series/'):
                query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
                page = int(query.get('page', ['1'])[0])
                pages.append(page)
                top = 8 if mode == 'pages' else 100000
                ids = [top - 2 * page, top - 1 - 2 * page]
                body = json.dumps([{'id': i, 'name': f'series {i}', 'version': 1, 'total': 1,
                                    'received_all': True, 'mbox': f'{base}/series/{i}/mbox/',
                                    'patches': [{'id': 10 * i}]} for i in ids])
                data = body.encode()
                self.send_response(200)
                self.send_header('Content-Type', 'application/json')
                self.send_header('Content-Length', str(len(data)))
                links = [f'<{base}/api/1.2/series/?page=1>; rel="first"']
                if page < 3 or mode == 'endless':
                    links.append(f'<{base}/api/1.2/series/?page={page + 1}>; rel="next"')
                self.send_header('Link', ', '.join(links))
                self.end_headers()
                self.wfile.write(data)
            elif mode == 'pages' and self.path.startswith('/series/'):
                self.answer(200, 'From x Mon Sep 17 00:00:00 2001\nSubject: x\n\n', 'text/plain')
            elif mode == 'lost' and self.path.startswith('/api/1.2/patches/'):
                patch = self.path.split('/')[4]
                self.answer(200, json.dumps([{'context': c, 'state': s}
                                             for c, s in kept.get(patch, [])]))
            elif mode == 'lost' and self.path.startswith('/api/1.2/series/'):
                self.answer(200, json.dumps([{
                    'id': 5, 'name': 'lost', 'version': 1, 'total': 2, 'received_all': True,
                    'mbox': f'{base}/series/5/mbox/',
                    'patches': [{'id': 50, 'msgid': '<lost@bootci.test>'}, {'id': 51}]}]))
            elif mode == 'lost' and self.path == '/series/5/mbox/':
                self.answer(200, 'From x Mon Sep 17 00:00:00 2001\nSubject: lost\n\n', 'text/plain')
            elif mode == 'badmsgid' and self.path.startswith('/api/1.2/series/'):
                self.answer(200, json.dumps([{
                    'id': 7, 'name': 'odd', 'version': 1, 'total': 1, 'received_all': True,
                    'mbox': f'{base}/series/7/mbox/',
                    'patches': [{'id': 70, 'msgid': 'no angle brackets'}]}]))
            elif mode == 'badmsgid' and self.path == '/series/7/mbox/':
                self.answer(200, 'From x Mon Sep 17 00:00:00 2001\nSubject: odd\n\n', 'text/plain')
            elif self.path.startswith('/api/1.2/projects/'):
                self.answer(200, json.dumps({'id': 1, 'maintainers': [{'id': 1}]}))
            elif self.path.startswith('/api/1.2/series/') and mode == '500':
                self.answer(500, '<h1>Server Error (500)</h1>', 'text/html')
            elif self.path.startswith('/api/1.2/series/') and mode == 'garbage':
                self.answer(200, '<html>maintenance</html>', 'text/html')
            elif self.path.startswith('/api/1.2/series/'):
                series = [{'id': 2, 'name': 'gone', 'version': 1, 'total': 1,
                           'received_all': True, 'mbox': f'{base}/series/2/mbox/',
                           'patches': [{'id': 20, 'msgid': '<gone@bootci.test>'}]},
                          {'id': 1, 'name': 'none', 'version': 1, 'total': 1,
                           'received_all': True, 'mbox': None,
                           'patches': [{'id': 10, 'msgid': '<none@bootci.test>'}]}]
                self.answer(200, json.dumps(series))
            else:
                self.answer(404, '{"detail": "Not found."}')

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(('127.0.0.1', 0), Handler)
    with open(port_file + '.tmp', 'w') as f:
        f.write(str(server.server_port))
    os.rename(port_file + '.tmp', port_file)
    server.serve_forever()


def main():
    command, folder = sys.argv[1], sys.argv[2]
    if command == 'settings':
        settings(folder)
        return
    if command == 'api-checks':
        api_checks(folder, sys.argv[3])
        return
    if command == 'api-times':
        api_times(folder, sys.argv[3])
        return
    if command == 'wait-pending':
        wait_pending(folder, sys.argv[3], sys.argv[4])
        return
    if command == 'fake':
        fake(folder, sys.argv[3])
        return
    sys.path.insert(0, folder)
    os.environ['DJANGO_SETTINGS_MODULE'] = 'bootci_pw_settings'
    django_up()
    if command == 'setup':
        setup(sys.argv[3], sys.argv[4])
    elif command == 'parse':
        parse(sys.argv[3:])
    elif command == 'checks':
        checks(sys.argv[3])
    else:
        sys.exit(f'patchwork-admin.py: unknown command {command}')


if __name__ == '__main__':
    main()
