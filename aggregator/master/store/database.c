// SPDX-License-Identifier: MIT
/*
 * The store's database: the schema and its migrations, every SQL statement,
 * opening and transactions. The operations of store.h (machines.c, runs.c) are
 * written once over the backend interface (backend.h), so SQLite and
 * PostgreSQL run the very same statements.
 *
 * The SQL is the subset both engines share: INSERT ... ON CONFLICT,
 * RETURNING (SQLite 3.35+), CHECK, foreign keys; column types TEXT, INTEGER,
 * BIGINT and DOUBLE PRECISION. Only a table's generated key is spelled per
 * backend: "{id}" in the schema text below is replaced by it.
 */
#include "internal.h"

#include "fsutil.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * Migrations: migrations[i] takes the schema from version i to i + 1. Never
 * edit one that has shipped; add the next. Each runs in its own transaction
 * with the version update, so a database is always at one version.
 */
static const char *const migrations[] = {
	/* 1: machines, tags, builds, runs, boots, crash records, results, suspend cycles. */
	"CREATE TABLE machines ("
	"  id {id},"
	"  name TEXT NOT NULL UNIQUE,"
	"  created DOUBLE PRECISION NOT NULL);"
	"CREATE TABLE machine_tags ("
	"  machine BIGINT NOT NULL REFERENCES machines(id) ON DELETE CASCADE,"
	"  tag TEXT NOT NULL,"
	"  PRIMARY KEY (machine, tag));"
	"CREATE INDEX machine_tags_tag ON machine_tags(tag);"
	"CREATE TABLE builds ("
	"  id {id},"
	"  name TEXT NOT NULL UNIQUE,"
	"  tree TEXT NOT NULL,"
	"  commit_id TEXT NOT NULL,"
	"  tier TEXT NOT NULL CHECK (tier IN ('fast', 'full')),"
	"  base BIGINT REFERENCES builds(id),"
	"  series_title TEXT,"
	"  message_id TEXT,"
	"  registered DOUBLE PRECISION NOT NULL);"
	"CREATE INDEX builds_tree ON builds(tree, registered);"
	"CREATE TABLE runs ("
	"  id {id},"
	"  machine BIGINT NOT NULL REFERENCES machines(id),"
	"  run_id TEXT NOT NULL,"
	"  build BIGINT REFERENCES builds(id),"
	"  image_id TEXT,"
	"  kernel TEXT,"
	"  cmdline TEXT,"
	"  digest TEXT NOT NULL,"
	"  archive_path TEXT NOT NULL,"
	"  archive_root TEXT NOT NULL,"
	"  state TEXT NOT NULL,"
	"  started DOUBLE PRECISION,"
	"  ended DOUBLE PRECISION,"
	"  ingested DOUBLE PRECISION NOT NULL,"
	"  UNIQUE (machine, run_id));"
	"CREATE INDEX runs_build ON runs(build);"
	"CREATE TABLE boots ("
	"  run BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  boot INTEGER NOT NULL,"
	"  started DOUBLE PRECISION,"
	"  kernel TEXT,"
	"  cmdline TEXT,"
	"  previous TEXT,"
	"  ending TEXT,"
	"  PRIMARY KEY (run, boot));"
	"CREATE TABLE crashes ("
	"  id {id},"
	"  run BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  boot INTEGER NOT NULL,"
	"  source TEXT NOT NULL,"
	"  name TEXT NOT NULL,"
	"  path TEXT NOT NULL);"
	"CREATE INDEX crashes_run ON crashes(run);"
	"CREATE TABLE results ("
	"  id {id},"
	"  run BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  job INTEGER NOT NULL,"
	"  name TEXT NOT NULL,"
	"  result TEXT NOT NULL,"
	"  duration DOUBLE PRECISION,"
	"  dmesg_warnings INTEGER NOT NULL);"
	"CREATE INDEX results_run ON results(run, name);"
	"CREATE INDEX results_name ON results(name);"
	"CREATE TABLE suspend_cycles ("
	"  run BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  cycle INTEGER NOT NULL,"
	"  state TEXT NOT NULL,"
	"  result TEXT NOT NULL,"
	"  wall DOUBLE PRECISION,"
	"  suspended DOUBLE PRECISION,"
	"  latency DOUBLE PRECISION,"
	"  kernel_suspend DOUBLE PRECISION,"
	"  kernel_resume DOUBLE PRECISION,"
	"  woke TEXT,"
	"  PRIMARY KEY (run, cycle));",
	/* 2: the scheduler's queue, machine states, recorded splits, build files (schedule.c). */
	"CREATE TABLE schedule_machines ("
	"  machine BIGINT PRIMARY KEY REFERENCES machines(id),"
	"  state TEXT NOT NULL CHECK (state IN ('ready', 'out')),"
	"  last_seen DOUBLE PRECISION NOT NULL,"
	"  power_cycles INTEGER NOT NULL,"
	"  last_cycle DOUBLE PRECISION,"
	"  note TEXT);"
	"CREATE TABLE schedule_jobs ("
	"  id {id},"
	"  machine BIGINT NOT NULL REFERENCES machines(id),"
	"  build BIGINT NOT NULL REFERENCES builds(id),"
	"  tier TEXT NOT NULL CHECK (tier IN ('fast', 'full')),"
	"  shard INTEGER NOT NULL,"
	"  shards INTEGER NOT NULL,"
	"  testlist TEXT NOT NULL,"
	"  run_id TEXT NOT NULL,"
	"  state TEXT NOT NULL CHECK (state IN ('queued', 'booted', 'done', 'abandoned')),"
	"  boots INTEGER NOT NULL,"
	"  queued DOUBLE PRECISION NOT NULL,"
	"  booted DOUBLE PRECISION,"
	"  UNIQUE (machine, run_id));"
	"CREATE INDEX schedule_jobs_machine ON schedule_jobs(machine, state, id);"
	"CREATE INDEX schedule_jobs_build ON schedule_jobs(build, tier);"
	"CREATE TABLE schedule_splits ("
	"  build BIGINT NOT NULL REFERENCES builds(id),"
	"  tier TEXT NOT NULL,"
	"  shard_group TEXT NOT NULL,"
	"  shard INTEGER NOT NULL,"
	"  shards INTEGER NOT NULL,"
	"  machine TEXT NOT NULL,"
	"  testlist TEXT NOT NULL,"
	"  PRIMARY KEY (build, tier, shard_group, shard));"
	"CREATE TABLE build_files ("
	"  build BIGINT NOT NULL REFERENCES builds(id) ON DELETE CASCADE,"
	"  path TEXT NOT NULL,"
	"  sha256 TEXT NOT NULL,"
	"  size BIGINT NOT NULL,"
	"  PRIMARY KEY (build, path));"
	"CREATE TABLE schedule_gates ("
	"  build BIGINT PRIMARY KEY REFERENCES builds(id),"
	"  decision TEXT NOT NULL,"
	"  decided DOUBLE PRECISION NOT NULL);"
	"CREATE TABLE known_good ("
	"  id {id},"
	"  version TEXT NOT NULL UNIQUE,"
	"  registered DOUBLE PRECISION NOT NULL);"
	"CREATE TABLE known_good_files ("
	"  known_good BIGINT NOT NULL REFERENCES known_good(id) ON DELETE CASCADE,"
	"  path TEXT NOT NULL,"
	"  sha256 TEXT NOT NULL,"
	"  size BIGINT NOT NULL,"
	"  PRIMARY KEY (known_good, path));",
	/*
	 * 3: no index of results by test name. Every ingest put each of its
	 * results somewhere else in it (a page written per result once the
	 * store is large: tests/bench/README.md). A
	 * test's history now goes through the runs (results_run), and its mean
	 * duration, which the scheduler's splits read, is kept per test.
	 */
	"DROP INDEX results_name;"
	"CREATE TABLE test_durations ("
	"  name TEXT PRIMARY KEY,"
	"  total DOUBLE PRECISION NOT NULL,"
	"  count BIGINT NOT NULL);"
	"INSERT INTO test_durations (name, total, count)"
	"  SELECT name, SUM(duration), COUNT(duration) FROM results"
	"  WHERE duration IS NOT NULL GROUP BY name;",
	/*
	 * 4: a run's durations counted later, by the scheduler that reads them
	 * (bci_store_durations_fold), not by ingest: an upsert per result
	 * weighed on every ingest, and many runs fold in one pass.
	 */
	"CREATE TABLE durations_pending ("
	"  run BIGINT PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE);",
	/*
	 * 5: the stretch of result ids that holds each run's results, kept as
	 * they are stored (bci_store_results_add): reading a run found it with
	 * min(id) and max(id) over the run's index entries, which are ordered
	 * by name, so each took a walk of all of them. Runs stored before have
	 * none (NULL): they are read as before.
	 */
	"ALTER TABLE runs ADD COLUMN results_first BIGINT;"
	"ALTER TABLE runs ADD COLUMN results_last BIGINT;",
	/*
	 * 6: a job's verdict and the master's end of its run (schedule/boot.c):
	 * the note says why a job ended and what its run's boots say (a kernel
	 * that crashed at every boot); ended is when the master ended the run at
	 * its boot cap and sent the machine to its known-good image; asked is
	 * when the machine's collect last asked about the run (its known-good
	 * image works), so the next netboot tells a disk that does not boot.
	 */
	"ALTER TABLE schedule_jobs ADD COLUMN note TEXT;"
	"ALTER TABLE schedule_jobs ADD COLUMN ended DOUBLE PRECISION;"
	"ALTER TABLE schedule_jobs ADD COLUMN asked DOUBLE PRECISION;",
	/*
	 * 7: the mail outbox (outbox.c): each message the master sends by
	 * SMTP, from queued to sent (or failed), so a restart neither loses one
	 * nor sends one twice. The build is its name, not a key: a message may
	 * answer no build, and a build is never deleted under its reply. One
	 * message a build (a unique index; NULLs do not collide), so two
	 * queuers of one build's reply at once cannot both add one.
	 */
	"CREATE TABLE mail_outbox ("
	"  id {id},"
	"  message_id TEXT NOT NULL UNIQUE,"
	"  build TEXT,"
	"  sender TEXT NOT NULL,"
	"  recipients TEXT NOT NULL,"
	"  message TEXT NOT NULL,"
	"  state TEXT NOT NULL CHECK (state IN ('queued', 'sent', 'failed')),"
	"  attempts INTEGER NOT NULL,"
	"  created DOUBLE PRECISION NOT NULL,"
	"  next_attempt DOUBLE PRECISION NOT NULL,"
	"  sent DOUBLE PRECISION,"
	"  last_error TEXT);"
	"CREATE INDEX mail_outbox_due ON mail_outbox(state, next_attempt);"
	"CREATE UNIQUE INDEX mail_outbox_build ON mail_outbox(build);",
	/*
	 * 8: the Patchwork projects followed (patchwork.c): each project's
	 * watermark, the series settled with their patches, and every check
	 * with how far its posting went, so a restart neither repeats a series
	 * nor posts a check twice.
	 */
	"CREATE TABLE patchwork_cursor ("
	"  project TEXT PRIMARY KEY,"
	"  last_series BIGINT NOT NULL,"
	"  updated DOUBLE PRECISION NOT NULL);"
	"CREATE TABLE patchwork_series ("
	"  project TEXT NOT NULL,"
	"  series BIGINT NOT NULL,"
	"  name TEXT,"
	"  version INTEGER NOT NULL,"
	"  submitter TEXT,"
	"  date TEXT,"
	"  message_id TEXT,"
	"  total INTEGER NOT NULL,"
	"  state TEXT NOT NULL CHECK (state IN ('picked up', 'superseded', 'skipped')),"
	"  build TEXT,"
	"  mbox TEXT,"
	"  superseded_by BIGINT,"
	"  seen DOUBLE PRECISION NOT NULL,"
	"  note TEXT,"
	"  PRIMARY KEY (project, series));"
	"CREATE INDEX patchwork_series_name ON patchwork_series(project, name);"
	"CREATE TABLE patchwork_patches ("
	"  project TEXT NOT NULL,"
	"  series BIGINT NOT NULL,"
	"  position INTEGER NOT NULL,"
	"  patch BIGINT NOT NULL,"
	"  PRIMARY KEY (project, series, position),"
	"  FOREIGN KEY (project, series) REFERENCES patchwork_series(project, series));"
	"CREATE TABLE patchwork_checks ("
	"  project TEXT NOT NULL,"
	"  series BIGINT NOT NULL,"
	"  patch BIGINT NOT NULL,"
	"  context TEXT NOT NULL,"
	"  state TEXT NOT NULL CHECK (state IN ('pending', 'success', 'warning', 'fail')),"
	"  description TEXT,"
	"  target_url TEXT,"
	"  status TEXT NOT NULL"
	"    CHECK (status IN ('queued', 'posting', 'unknown', 'posted', 'refused')),"
	"  attempts INTEGER NOT NULL,"
	"  queued DOUBLE PRECISION NOT NULL,"
	"  claimed DOUBLE PRECISION,"
	"  posted DOUBLE PRECISION,"
	"  note TEXT,"
	"  PRIMARY KEY (project, patch, context, state));"
	"CREATE INDEX patchwork_checks_open ON patchwork_checks(project, status);",
	/*
	 * 9: the stages of a build's way from the mail to the reply that no
	 * other row keeps (metrics.c): when its series was complete on
	 * Patchwork, when its build command started and ended, when its first
	 * job was handed out. By the build's name: a series' build has stages
	 * before it is registered, and one that never builds is no build.
	 * The metrics read each build's series and its checks: by build, and
	 * by series (a project's checks are tens of thousands).
	 */
	"CREATE TABLE build_stages ("
	"  build TEXT NOT NULL,"
	"  stage TEXT NOT NULL,"
	"  at DOUBLE PRECISION NOT NULL,"
	"  PRIMARY KEY (build, stage));"
	"CREATE INDEX patchwork_series_build ON patchwork_series(build);"
	"CREATE INDEX patchwork_checks_series ON patchwork_checks(project, series, context);",
	/*
	 * 10: a machine's shard group (machines.conf's shard-group, or `machine
	 * group`): the machines of a group run the same tests, so the report
	 * counts a test's baseline on all of them (report.h).
	 */
	"ALTER TABLE machines ADD COLUMN shard_group TEXT;"
	"CREATE INDEX machines_shard_group ON machines(shard_group);",
	/*
	 * 11: a job's kind: NULL for a tier's job; confirm, a rerun of a
	 * build's possible new issues (schedule/confirm.c); bisect, a step of a
	 * bisection. A machine is handed its confirm and bisect jobs before its
	 * tiers' (S_JOB_NEXT).
	 */
	"ALTER TABLE schedule_jobs ADD COLUMN kind TEXT CHECK (kind IN ('confirm', 'bisect'));",
	/*
	 * 12: bisections of a series' possible new issues (bisect.c): one a
	 * build at a time, each step (the series applied up to a patch, built as
	 * a candidate and run) kept, so a master restarted resumes where it was.
	 * The series settled before are recorded as not bisected: an upgraded
	 * master does not bisect its whole past.
	 */
	"CREATE TABLE bisects ("
	"  build TEXT PRIMARY KEY,"
	"  project TEXT NOT NULL,"
	"  series BIGINT NOT NULL,"
	"  patches INTEGER NOT NULL,"
	"  tests TEXT NOT NULL,"
	"  machines TEXT NOT NULL,"
	"  pairs TEXT NOT NULL,"
	"  state TEXT NOT NULL CHECK (state IN ('running', 'done', 'stopped')),"
	"  verdict TEXT,"
	"  started DOUBLE PRECISION NOT NULL,"
	"  ended DOUBLE PRECISION);"
	"CREATE TABLE bisect_steps ("
	"  build TEXT NOT NULL REFERENCES bisects(build),"
	"  step INTEGER NOT NULL,"
	"  patches INTEGER NOT NULL,"
	"  candidate TEXT NOT NULL,"
	"  state TEXT NOT NULL"
	"    CHECK (state IN ('building', 'running', 'good', 'bad', 'skipped', 'flaky')),"
	"  note TEXT,"
	"  started DOUBLE PRECISION NOT NULL,"
	"  ended DOUBLE PRECISION,"
	"  PRIMARY KEY (build, step));"
	/* The series picked up before: not bisected (their threads are old news). */
	"INSERT INTO bisects (build, project, series, patches, tests, machines, pairs, state,"
	"  verdict, started, ended)"
	"  SELECT build, project, series, total, '', '', '', 'done',"
	"  'not bisected: picked up before bisections', seen, seen FROM patchwork_series"
	"  WHERE state = 'picked up' AND build IS NOT NULL AND total > 1;",
	/*
	 * 13: a tree's bisection (bisect/tree.c): the commits of its range,
	 * oldest first, one a line (its candidates); NULL for a series'.
	 */
	"ALTER TABLE bisects ADD COLUMN commits TEXT;",
};

_Static_assert(sizeof(migrations) / sizeof(migrations[0]) == BCI_STORE_SCHEMA_VERSION,
	       "one migration per schema version");
/* Selected columns of a run, shared by every statement that reads runs. */
#define RUN_COLUMNS \
	"SELECT r.id, m.name, r.run_id, b.name, r.image_id, r.kernel, r.cmdline, r.digest," \
	" r.archive_path, r.archive_root, r.state, r.started, r.ended, r.ingested" \
	" FROM runs r JOIN machines m ON m.id = r.machine LEFT JOIN builds b ON b.id = r.build"
#define RESULT_COLUMNS "res.job, res.name, res.result, res.duration, res.dmesg_warnings"
/* A run's columns, then a result's (RESULT_COLUMNS): one row per result. */
#define RUN_RESULT_COLUMNS \
	"SELECT r.id, m.name, r.run_id, b.name, r.image_id, r.kernel, r.cmdline, r.digest," \
	" r.archive_path, r.archive_root, r.state, r.started, r.ended, r.ingested, " RESULT_COLUMNS \
	" FROM runs r JOIN machines m ON m.id = r.machine LEFT JOIN builds b ON b.id = r.build" \
	" JOIN results res ON res.run = r.id"
/* RUN_RESULT_COLUMNS' columns, the runs driving: WHERE must join res.run = r.id. */
#define HISTORY_COLUMNS \
	"SELECT r.id, m.name, r.run_id, b.name, r.image_id, r.kernel, r.cmdline, r.digest," \
	" r.archive_path, r.archive_root, r.state, r.started, r.ended, r.ingested, " RESULT_COLUMNS \
	" FROM runs r CROSS JOIN results res JOIN machines m ON m.id = r.machine" \
	" LEFT JOIN builds b ON b.id = r.build"
/* Run ?1's results (S_RESULTS): the stretch of ids that holds them, rows of other runs out. */
#define RUN_STRETCH \
	"res.id BETWEEN COALESCE((SELECT results_first FROM runs WHERE id = ?1)," \
	" (SELECT min(id) FROM results WHERE run = ?1))" \
	" AND COALESCE((SELECT results_last FROM runs WHERE id = ?1)," \
	" (SELECT max(id) FROM results WHERE run = ?1)) AND +res.run = ?1"
/* The value rows of S_RESULTS_ADD_MANY and S_RESULTS_ADD_SOME. */
#define RESULT_ROW "(?, ?, ?, ?, ?, ?)"
#define RESULT_ROWS_4 RESULT_ROW ", " RESULT_ROW ", " RESULT_ROW ", " RESULT_ROW
#define RESULT_ROWS_16 RESULT_ROWS_4 ", " RESULT_ROWS_4 ", " RESULT_ROWS_4 ", " RESULT_ROWS_4
#define RESULT_ROWS_32 RESULT_ROWS_16 ", " RESULT_ROWS_16
#define RESULT_ROWS_128 RESULT_ROWS_32 ", " RESULT_ROWS_32 ", " RESULT_ROWS_32 ", " RESULT_ROWS_32
#define RESULT_ROWS_512 RESULT_ROWS_128 ", " RESULT_ROWS_128 ", " RESULT_ROWS_128 ", " RESULT_ROWS_128
/* Each text holds as many rows as backend.h says its statement inserts. */
#define RESULT_ROWS_TEXT_SIZE(rows) ((rows) * (sizeof(RESULT_ROW) - 1) + ((rows) - 1) * 2 + 1)
_Static_assert(sizeof(RESULT_ROWS_512) == RESULT_ROWS_TEXT_SIZE(BCI_STORE_RESULTS_PER_INSERT),
	       "S_RESULTS_ADD_MANY's rows are BCI_STORE_RESULTS_PER_INSERT");
_Static_assert(sizeof(RESULT_ROWS_32) == RESULT_ROWS_TEXT_SIZE(BCI_STORE_RESULTS_PER_SMALL_INSERT),
	       "S_RESULTS_ADD_SOME's rows are BCI_STORE_RESULTS_PER_SMALL_INSERT");
_Static_assert(sizeof(RESULT_ROW) == BCI_STORE_RESULT_VALUES + 2 * (BCI_STORE_RESULT_VALUES - 1) + 2 + 1,
	       "a result row binds BCI_STORE_RESULT_VALUES values");

static const char *const statements[S_SCHEDULE_FIRST] = {
	[S_VERSION_TABLE] = "CREATE TABLE IF NOT EXISTS bootci_schema (version INTEGER NOT NULL)",
	[S_VERSION_GET] = "SELECT version FROM bootci_schema",
	[S_VERSION_CLEAR] = "DELETE FROM bootci_schema",
	[S_VERSION_SET] = "INSERT INTO bootci_schema (version) VALUES (?)",
	/* DO UPDATE (to the same value) so RETURNING gives the key of an existing machine too. */
	[S_MACHINE_ENSURE] = "INSERT INTO machines (name, created) VALUES (?, ?)"
			     " ON CONFLICT (name) DO UPDATE SET name = excluded.name RETURNING id",
	[S_TAG_ADD] = "INSERT INTO machine_tags (machine, tag) VALUES (?, ?) ON CONFLICT DO NOTHING",
	[S_TAG_DELETE] = "DELETE FROM machine_tags WHERE tag = ?"
			 " AND machine = (SELECT id FROM machines WHERE name = ?)",
	[S_TAGS] = "SELECT t.tag FROM machine_tags t JOIN machines m ON m.id = t.machine"
		   " WHERE m.name = ? ORDER BY t.tag",
	[S_MACHINES_ALL] = "SELECT name FROM machines ORDER BY name",
	[S_MACHINES_TAGGED] = "SELECT m.name FROM machines m JOIN machine_tags t ON t.machine = m.id"
			      " WHERE t.tag = ? ORDER BY m.name",
	[S_MACHINE_GROUP_SET] = "UPDATE machines SET shard_group = ? WHERE id = ?",
	[S_MACHINE_GROUP] = "SELECT shard_group FROM machines WHERE name = ?",
	[S_MACHINES_GROUPED] = "SELECT name FROM machines WHERE shard_group = ? ORDER BY name",
	[S_BUILD_ID] = "SELECT id FROM builds WHERE name = ?",
	[S_BUILD_PUT] = "INSERT INTO builds (name, tree, commit_id, tier, base, series_title,"
			" message_id, registered) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
			" ON CONFLICT (name) DO UPDATE SET tree = excluded.tree,"
			" commit_id = excluded.commit_id, tier = excluded.tier, base = excluded.base,"
			" series_title = excluded.series_title, message_id = excluded.message_id,"
			" registered = excluded.registered",
	[S_BUILD_GET] = "SELECT b.name, b.tree, b.commit_id, b.tier, base.name, b.series_title,"
			" b.message_id, b.registered FROM builds b"
			" LEFT JOIN builds base ON base.id = b.base WHERE b.name = ?",
	[S_BUILDS_TREE] = "SELECT b.name, b.tree, b.commit_id, b.tier, base.name, b.series_title,"
			  " b.message_id, b.registered FROM builds b"
			  " LEFT JOIN builds base ON base.id = b.base WHERE b.tree = ?"
			  " ORDER BY b.registered DESC, b.id DESC",
	[S_RUN_ADD] = "INSERT INTO runs (machine, run_id, build, image_id, kernel, cmdline, digest,"
		      " archive_path, archive_root, state, started, ended, ingested)"
		      " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
	[S_RUN_GET] = RUN_COLUMNS " WHERE m.name = ? AND r.run_id = ?",
	[S_RUNS_ALL] = RUN_COLUMNS " ORDER BY r.id",
	[S_RUNS_MACHINE] = RUN_COLUMNS " WHERE m.name = ? ORDER BY r.id",
	/* The same but the reruns of possible new issues (S_RUNS_BUILD says why). */
	[S_RUNS_MACHINE_OWN] = RUN_COLUMNS " WHERE m.name = ? AND NOT EXISTS (SELECT 1"
		" FROM schedule_jobs j WHERE j.machine = r.machine AND j.run_id = r.run_id"
		" AND j.kind = 'confirm') ORDER BY r.id",
	[S_BOOT_ADD] = "INSERT INTO boots (run, boot, started, kernel, cmdline, previous, ending)"
		       " VALUES (?, ?, ?, ?, ?, ?, ?)",
	[S_CRASH_ADD] = "INSERT INTO crashes (run, boot, source, name, path) VALUES (?, ?, ?, ?, ?)",
	/* BCI_STORE_RESULTS_PER_INSERT rows a statement: ingest's 10k rows in about twenty. */
	[S_RESULTS_ADD_MANY] = "INSERT INTO results (run, job, name, result, duration, dmesg_warnings)"
			       " VALUES " RESULT_ROWS_512,
	/* What is left, BCI_STORE_RESULTS_PER_SMALL_INSERT rows a statement. */
	[S_RESULTS_ADD_SOME] = "INSERT INTO results (run, job, name, result, duration, dmesg_warnings)"
			       " VALUES " RESULT_ROWS_32,
	[S_RESULT_ADD] = "INSERT INTO results (run, job, name, result, duration, dmesg_warnings)"
			 " VALUES (?, ?, ?, ?, ?, ?)",
	/* The largest result id (0: none): a run's new rows come after it. */
	[S_RESULTS_MAX_ID] = "SELECT COALESCE(max(id), 0) FROM results",
	/* The run's stretch of result ids (S_RESULTS) grown to hold ?2 to ?3. */
	[S_RUN_RESULTS_RANGE] = "UPDATE runs SET"
				" results_first = CASE WHEN results_first IS NULL OR results_first > ?2"
				" THEN ?2 ELSE results_first END,"
				" results_last = CASE WHEN results_last IS NULL OR results_last < ?3"
				" THEN ?3 ELSE results_last END WHERE id = ?1",
	[S_DURATION_ADD] = "INSERT INTO test_durations (name, total, count) VALUES (?, ?, 1)"
			   " ON CONFLICT (name) DO UPDATE SET"
			   " total = test_durations.total + excluded.total,"
			   " count = test_durations.count + excluded.count",
	/* A run whose durations are not counted yet (bci_store_durations_fold). */
	[S_DURATIONS_PENDING_ADD] = "INSERT INTO durations_pending (run) VALUES (?)",
	/* Every pending run's durations at once: summed per test, then upserted. */
	[S_DURATIONS_FOLD] = "INSERT INTO test_durations (name, total, count)"
			     " SELECT name, SUM(duration), COUNT(duration) FROM results"
			     " WHERE run IN (SELECT run FROM durations_pending)"
			     " AND duration IS NOT NULL GROUP BY name"
			     " ON CONFLICT (name) DO UPDATE SET"
			     " total = test_durations.total + excluded.total,"
			     " count = test_durations.count + excluded.count",
	[S_DURATIONS_PENDING_CLEAR] = "DELETE FROM durations_pending",
	[S_SUSPEND_ADD] = "INSERT INTO suspend_cycles (run, cycle, state, result, wall, suspended,"
			  " latency, kernel_suspend, kernel_resume, woke)"
			  " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[S_BOOTS] = "SELECT boot, started, kernel, cmdline, previous, ending FROM boots"
		    " WHERE run = ? ORDER BY boot",
	[S_CRASHES] = "SELECT boot, source, name, path FROM crashes WHERE run = ? ORDER BY id",
	/*
	 * A run's results, in the order they were stored. One ingest stores a
	 * run in one transaction, so its rows are one stretch of ids: reading
	 * that stretch of the table in key order spares the index walk, row
	 * lookups and sort that "WHERE run = ? ORDER BY id" takes (the
	 * unary + keeps the planner off the index); rows of other runs inside
	 * the stretch, if writers ever interleave, are filtered out. The
	 * stretch is the one the run keeps (S_RUN_RESULTS_RANGE), or for a run
	 * stored before schema 5 the one its index entries give (each bound a
	 * walk of them all: COALESCE takes it only then).
	 */
	[S_RESULTS] = "SELECT " RESULT_COLUMNS " FROM results res WHERE " RUN_STRETCH " ORDER BY res.id",
	/* The same rows, only what a comparison reads (each column is a step of every row). */
	[S_RESULTS_BRIEF] = "SELECT res.job, res.name, res.result FROM results res WHERE " RUN_STRETCH
			    " ORDER BY res.id",
	[S_SUSPENDS] = "SELECT cycle, state, result, wall, suspended, latency, kernel_suspend,"
		       " kernel_resume, woke FROM suspend_cycles WHERE run = ? ORDER BY cycle",
	[S_RESULT_GET] = RUN_RESULT_COLUMNS " WHERE m.name = ? AND r.run_id = ? AND res.name = ? ORDER BY res.id LIMIT 1",
	/* The build's own runs: the reruns of its possible new issues (bci_store_build_reruns_each) not. */
	[S_RUNS_BUILD] = RUN_COLUMNS " WHERE b.name = ? AND NOT EXISTS (SELECT 1 FROM schedule_jobs j"
		" WHERE j.machine = r.machine AND j.run_id = r.run_id AND j.kind = 'confirm')"
		" ORDER BY m.name, r.id",
	/*
	 * A test's results across runs: each run probes results_run (run,
	 * name). CROSS JOIN keeps SQLite's planner on the runs first (it would
	 * scan the whole index otherwise); PostgreSQL reads it as a plain join.
	 */
	[S_HISTORY] = HISTORY_COLUMNS " WHERE res.run = r.id AND res.name = ?"
		      " ORDER BY r.ingested, r.id, res.id",
	[S_HISTORY_MACHINE] = HISTORY_COLUMNS " WHERE res.run = r.id AND res.name = ? AND m.name = ?"
			      " ORDER BY r.ingested, r.id, res.id",
};

/* ---- running statements ---- */

double bci_store_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int bci_store_query_text(struct bci_store *store, enum bci_store_statement id, const char *sql,
			 const struct bci_store_value *params, int n_params, bci_store_row_fn row,
			 void *ctx, char *err, size_t err_size)
{
	return store->backend->query(store->db, id, sql, params, n_params, row, ctx, err, err_size);
}

int bci_store_query(struct bci_store *store, enum bci_store_statement id,
		    const struct bci_store_value *params, int n_params, bci_store_row_fn row,
		    void *ctx, char *err, size_t err_size)
{
	if (id >= S_SCHEDULE_FIRST) {
		snprintf(err, err_size, "store: statement %d is not one of database.c's", (int)id);
		return -EINVAL;
	}
	return bci_store_query_text(store, id, statements[id], params, n_params, row, ctx, err,
				    err_size);
}

int bci_store_row_first_int(const struct bci_store_value *columns, int n, void *ctx)
{
	if (n < 1)
		return -EPROTO;
	*(int64_t *)ctx = column_int(&columns[0], -1);
	return 0;
}

/* ---- opening and migrations ---- */

/* The schema text of migration @index with "{id}" spelled for @backend. */
static char *migration_text(const struct bci_store_backend *backend, size_t index)
{
	const char *sql = migrations[index], *marker = "{id}";
	size_t n = 0, len = strlen(sql), id_len = strlen(backend->id_column);
	char *out, *w;

	for (const char *p = strstr(sql, marker); p; p = strstr(p + 4, marker))
		n++;
	out = malloc(len + n * id_len + 1);
	if (!out)
		return NULL;
	w = out;
	for (const char *p = sql; *p;) {
		if (!strncmp(p, marker, 4)) {
			memcpy(w, backend->id_column, id_len);
			w += id_len;
			p += 4;
		} else {
			*w++ = *p++;
		}
	}
	*w = '\0';
	return out;
}

/*
 * One step: in one transaction, reads the version and applies the next
 * migration. Returns 1 when a migration was applied, 0 when the schema is
 * current. PostgreSQL serialises masters migrating one database at once
 * with a transaction-scoped advisory lock; SQLite's BEGIN IMMEDIATE does.
 */
static int migrate_step(struct bci_store *store, char *err, size_t err_size)
{
	/* An arbitrary constant naming bootci's schema lock among advisory locks. */
	static const char *const pg_lock = "SELECT pg_advisory_xact_lock(7346502018)";
	const struct bci_store_backend *backend = store->backend;
	struct bci_store_value param;
	int64_t version = 0;
	char *sql;
	int ret;

	ret = bci_store_begin(store, err, err_size);
	if (ret < 0)
		return ret;
	if (backend == &bci_store_postgres_backend) {
		ret = backend->exec(store->db, pg_lock, err, err_size);
		if (ret < 0)
			goto fail;
	}
	ret = bci_store_query(store, S_VERSION_TABLE, NULL, 0, NULL, NULL, err, err_size);
	if (ret < 0)
		goto fail;
	ret = bci_store_query(store, S_VERSION_GET, NULL, 0, bci_store_row_first_int, &version,
			      err, err_size);
	if (ret < 0)
		goto fail;
	if (version > BCI_STORE_SCHEMA_VERSION || version < 0) {
		snprintf(err, err_size,
			 "the database's schema is version %lld, newer than this bootci's (%d):"
			 " use a newer bootci-aggregator", (long long)version,
			 BCI_STORE_SCHEMA_VERSION);
		ret = -EPROTONOSUPPORT;
		goto fail;
	}
	if (version == BCI_STORE_SCHEMA_VERSION) {
		ret = bci_store_commit(store, err, err_size);
		return ret < 0 ? ret : 0;
	}
	sql = migration_text(backend, (size_t)version);
	if (!sql) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = backend->exec(store->db, sql, err, err_size);
	free(sql);
	if (ret < 0) {
		char inner[512];

		snprintf(inner, sizeof(inner), "%s", err);
		snprintf(err, err_size, "schema migration %lld to %lld: %s", (long long)version,
			 (long long)version + 1, inner);
		goto fail;
	}
	ret = bci_store_query(store, S_VERSION_CLEAR, NULL, 0, NULL, NULL, err, err_size);
	if (ret < 0)
		goto fail;
	param = value_int(version + 1);
	ret = bci_store_query(store, S_VERSION_SET, &param, 1, NULL, NULL, err, err_size);
	if (ret < 0)
		goto fail;
	ret = bci_store_commit(store, err, err_size);
	return ret < 0 ? ret : 1;
fail:
	bci_store_rollback(store);
	return ret;
}

static int store_migrate(struct bci_store *store, char *err, size_t err_size)
{
	int ret;

	while ((ret = migrate_step(store, err, err_size)) > 0)
		;
	return ret;
}

/* The SQLite path of a "sqlite:PATH" URL, or the default under @data_dir, in @path. */
static int sqlite_path(const char *url, const char *data_dir, char *path, size_t size,
		       char *err, size_t err_size)
{
	int ret;

	if (url && *url) {
		if (!url[strlen("sqlite:")]) {
			snprintf(err, err_size, "store URL '%s': no database path after sqlite:", url);
			return -EINVAL;
		}
		if ((size_t)snprintf(path, size, "%s", url + strlen("sqlite:")) >= size)
			return -ENAMETOOLONG;
		return 0;
	}
	if (!data_dir || !*data_dir) {
		snprintf(err, err_size, "no store URL and no data folder to hold the default database");
		return -EINVAL;
	}
	ret = bci_mkdir_p(data_dir, 0755);
	if (ret < 0) {
		snprintf(err, err_size, "%s: cannot create the data folder: %s", data_dir, strerror(-ret));
		return ret;
	}
	if ((size_t)snprintf(path, size, "%s/bootci.sqlite", data_dir) >= size)
		return -ENAMETOOLONG;
	return 0;
}

int bci_store_open(const char *url, const char *data_dir, struct bci_store **out,
		   char *err, size_t err_size)
{
	struct bci_store *store;
	char path[PATH_MAX];
	int ret;

	store = calloc(1, sizeof(*store));
	if (!store)
		return -ENOMEM;
	if (!url || !*url || !strncmp(url, "sqlite:", strlen("sqlite:"))) {
		ret = sqlite_path(url, data_dir, path, sizeof(path), err, err_size);
		if (ret < 0)
			goto fail;
		store->backend = &bci_store_sqlite_backend;
		ret = bci_store_sqlite_open(path, S_COUNT, &store->db, err, err_size);
	} else if (!strncmp(url, "postgresql://", 13) || !strncmp(url, "postgres://", 11) ||
		   strchr(url, '=')) {
		store->backend = &bci_store_postgres_backend;
		ret = bci_store_postgres_open(url, S_COUNT, &store->db, err, err_size);
	} else {
		snprintf(err, err_size,
			 "store URL '%s': expected sqlite:PATH, postgresql://... or a libpq"
			 " conninfo (key=value ...)", url);
		ret = -EINVAL;
	}
	if (ret < 0)
		goto fail;
	ret = store_migrate(store, err, err_size);
	if (ret < 0)
		goto fail;
	*out = store;
	return 0;
fail:
	bci_store_close(store);
	return ret;
}

void bci_store_close(struct bci_store *store)
{
	if (!store)
		return;
	if (store->db) {
		bci_store_rollback(store);
		store->backend->close(store->db);
	}
	free(store);
}

const char *bci_store_backend_name(const struct bci_store *store)
{
	return store->backend->name;
}

int bci_store_schema_version(struct bci_store *store, int *version, char *err, size_t err_size)
{
	int64_t v = 0;
	int ret;

	ret = bci_store_query(store, S_VERSION_GET, NULL, 0, bci_store_row_first_int, &v, err, err_size);
	if (ret < 0)
		return ret;
	*version = (int)v;
	return 0;
}

/* ---- transactions ---- */

int bci_store_begin(struct bci_store *store, char *err, size_t err_size)
{
	int ret;

	if (store->in_transaction) {
		snprintf(err, err_size, "store: a transaction is already open");
		return -EBUSY;
	}
	ret = store->backend->exec(store->db, store->backend->begin_sql, err, err_size);
	if (ret < 0)
		return ret;
	store->in_transaction = 1;
	return 0;
}

int bci_store_begin_relaxed(struct bci_store *store, char *err, size_t err_size)
{
	int ret = bci_store_begin(store, err, err_size);

	if (ret < 0 || !store->backend->relaxed_sql)
		return ret;
	ret = store->backend->exec(store->db, store->backend->relaxed_sql, err, err_size);
	if (ret < 0)
		bci_store_rollback(store);
	return ret;
}

int bci_store_commit(struct bci_store *store, char *err, size_t err_size)
{
	int ret;

	if (!store->in_transaction) {
		snprintf(err, err_size, "store: commit without a transaction");
		return -EINVAL;
	}
	ret = store->backend->exec(store->db, "COMMIT", err, err_size);
	if (ret < 0) {
		/* A failed COMMIT (SQLite busy, PostgreSQL serialisation) leaves nothing written. */
		bci_store_rollback(store);
		return ret;
	}
	store->in_transaction = 0;
	return 0;
}

void bci_store_rollback(struct bci_store *store)
{
	char ignored[256];

	if (!store->in_transaction)
		return;
	store->backend->exec(store->db, "ROLLBACK", ignored, sizeof(ignored));
	store->in_transaction = 0;
}
