// SPDX-License-Identifier: MIT
/*
 * The power drivers (power.h): the command driver runs the inventory's
 * commands, the ipmi driver runs ipmitool; both through run(), which keeps
 * what the program printed so the state can be read and a fault named.
 */
#include "power.h"

#include "message.h"
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* How often a state is read while it is not yet the one asked for. */
#define READ_BACK_STEP_MS 500
/* What is kept of a program's output (the rest is read and dropped). */
#define OUTPUT_MAX 4096

struct run_output {
	char text[OUTPUT_MAX + 1];
	size_t len;
	int status;		/* the wait status */
	bool timed_out;
};

static long monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void output_take(int fd, struct run_output *out)
{
	char buf[1024];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		size_t keep = (size_t)n;

		if (keep > OUTPUT_MAX - out->len)
			keep = OUTPUT_MAX - out->len;
		memcpy(out->text + out->len, buf, keep);
		out->len += keep;
	}
	out->text[out->len] = '\0';
}

/*
 * Runs @argv (stdin /dev/null, stdout and stderr kept in @out) for at most
 * @timeout seconds, then SIGTERM, SIGKILL. 0 once it ended (its status in
 * @out, timed_out when it was stopped), -ETIME when it could not be killed,
 * -errno when it could not be started (@why says so).
 */
static int run(char *const *argv, unsigned long timeout, struct run_output *out, char *why,
	       size_t why_size)
{
	struct bci_spawn_kill kill = { .first_signal = SIGTERM, .grace_ms = 2000, .give_up_ms = 2000 };
	int null_fd, pipe_fds[2], ret;
	long deadline;
	pid_t pid;

	memset(out, 0, sizeof(*out));
	null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null_fd < 0)
		return -errno;
	if (pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) < 0) {
		ret = -errno;
		close(null_fd);
		return ret;
	}
	struct bci_spawn spawn = {
		.path = argv[0], .argv = argv, .stdin_fd = null_fd, .stdout_fd = pipe_fds[1],
		.stderr_fd = pipe_fds[1], .process_group = true,
	};
	ret = bci_spawn_start(&spawn, &pid);
	close(null_fd);
	close(pipe_fds[1]);
	if (ret < 0) {
		close(pipe_fds[0]);
		bci_message(why, why_size, "%s: cannot start: %s", argv[0], strerror(-ret));
		return ret;
	}
	deadline = monotonic_ms() + (long)timeout * 1000;
	for (;;) {
		struct pollfd pfd = { .fd = pipe_fds[0], .events = POLLIN };
		pid_t done;

		/* A child that left something running behind it may hold the pipe: the exit ends the wait. */
		if (poll(&pfd, 1, 20) > 0)
			output_take(pipe_fds[0], out);
		done = waitpid(pid, &out->status, WNOHANG);
		if (done == pid)
			break;
		if (done < 0 && errno != EINTR) {
			ret = -errno;
			bci_message(why, why_size, "%s: %s", argv[0], strerror(errno));
			close(pipe_fds[0]);
			return ret;
		}
		if (monotonic_ms() >= deadline &&
		    bci_spawn_kill_step(&kill, pid, monotonic_ms()) == -ETIME) {
			bci_message(why, why_size, "%s: still running after SIGKILL, left behind",
				    argv[0]);
			close(pipe_fds[0]);
			return -ETIME;
		}
	}
	output_take(pipe_fds[0], out);
	close(pipe_fds[0]);
	out->timed_out = kill.sent != 0;
	return 0;
}

static bool exited_zero(const struct run_output *out)
{
	return !out->timed_out && WIFEXITED(out->status) && WEXITSTATUS(out->status) == 0;
}

/* The first line of @text holding @needle, cut at @size into @line; false when none does. */
static bool line_with(const char *text, const char *needle, char *line, size_t size)
{
	const char *hit = strstr(text, needle), *start, *end;

	if (!hit)
		return false;
	for (start = hit; start > text && start[-1] != '\n'; start--)
		;
	/* ipmitool -v marks some of its lines with "> ": not part of what they say. */
	while (*start == '>' || *start == ' ')
		start++;
	end = strchr(hit, '\n');
	if (!end)
		end = hit + strlen(hit);
	bci_quote(line, size, start, (size_t)(end - start));
	return true;
}

/* The last line of @text that is not empty, quoted into @line ("" when none). */
static void last_line(const char *text, char *line, size_t size)
{
	const char *end = text + strlen(text), *start;

	while (end > text && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
		end--;
	for (start = end; start > text && start[-1] != '\n'; start--)
		;
	bci_quote(line, size, start, (size_t)(end - start));
}

/* ---- the command driver ---- */

/* "on" or "off" as the first word of a power-status command's output. */
static enum bci_power_state state_word(const char *text)
{
	size_t skip = strspn(text, " \t\r\n");

	if (!strncasecmp(text + skip, "on", 2) && strchr(" \t\r\n", text[skip + 2]))
		return BCI_POWER_IS_ON;
	if (!strncasecmp(text + skip, "off", 3) && strchr(" \t\r\n", text[skip + 3]))
		return BCI_POWER_IS_OFF;
	return BCI_POWER_UNKNOWN;
}

/* Runs one of the machine's commands, its output to the log. 0, or -EIO with @r said. */
static int command_run(const struct bci_power *p, char *const *argv, const char *key,
		       struct run_output *out, struct bci_power_result *r)
{
	char how[64], line[160];
	int ret;

	if (p->log)
		fflush(p->log);
	ret = run(argv, p->timeout, out, r->why, sizeof(r->why));
	if (ret == -ENOMEM)
		return ret;
	if (p->log && out->len) {
		fwrite(out->text, 1, out->len, p->log);
		if (out->text[out->len - 1] != '\n')
			fputc('\n', p->log);
		fflush(p->log);
	}
	if (ret < 0) {
		r->fault = BCI_POWER_FAILED;
		return -EIO;
	}
	if (exited_zero(out))
		return 0;
	r->fault = BCI_POWER_FAILED;
	if (out->timed_out) {
		bci_message(r->why, sizeof(r->why), "%s (%s): timed out after %lu s", key, argv[0],
			    p->timeout);
		return -EIO;
	}
	bci_spawn_describe(out->status, how, sizeof(how));
	last_line(out->text, line, sizeof(line));
	bci_message(r->why, sizeof(r->why), "%s (%s): %s%s%s", key, argv[0], how,
		    line[0] ? ": " : "", line);
	return -EIO;
}

static int command_status(const struct bci_power *p, struct bci_power_result *r)
{
	struct run_output out;
	int ret;

	if (!p->machine->power_status) {
		r->state = BCI_POWER_UNKNOWN;
		return 0;
	}
	if ((ret = command_run(p, p->machine->power_status, "power-status", &out, r)) < 0)
		return ret;
	r->state = state_word(out.text);
	if (r->state == BCI_POWER_UNKNOWN) {
		char line[160];

		last_line(out.text, line, sizeof(line));
		r->fault = BCI_POWER_FAILED;
		bci_message(r->why, sizeof(r->why), "power-status printed '%s', not on or off", line);
		return -EIO;
	}
	return 0;
}

static int command_act(const struct bci_power *p, enum bci_power_action action,
		       struct bci_power_result *r)
{
	const struct bci_inventory_machine *m = p->machine;
	char *const *argv = m->power;
	const char *key = "power";
	struct run_output out;
	int ret;

	if (action == BCI_POWER_STATUS)
		return command_status(p, r);
	if (action == BCI_POWER_ON && m->power_on) {
		argv = m->power_on;
		key = "power-on";
	} else if (action == BCI_POWER_OFF) {
		if (!m->power_off) {
			r->fault = BCI_POWER_FAILED;
			bci_message(r->why, sizeof(r->why), "no power-off command");
			return -ENOTSUP;
		}
		argv = m->power_off;
		key = "power-off";
	}
	if ((ret = command_run(p, argv, key, &out, r)) < 0)
		return ret;
	bci_message(r->why, sizeof(r->why), "%s ran", key);
	return 0;
}

/* ---- the ipmi driver ---- */

/* Names the fault of an ipmitool call that failed, from what it printed. */
static void ipmi_fault(const struct bci_power *p, const struct run_output *out,
		       struct bci_power_result *r)
{
	/* What ipmitool -v prints when a BMC refuses a session (RMCP+ RAKP, or the privilege). */
	static const char *const refusals[] = {
		"RAKP", "unauthorized", "Unauthorized", "cipher suite", "Cipher Suite",
		"privilege", "Privilege", "Invalid user",
	};
	const struct bci_inventory_ipmi *ipmi = &p->machine->ipmi;
	char line[200], how[64];

	/* The session was made and the chassis command itself failed: whatever else -v said. */
	if (line_with(out->text, "Chassis Power Control", line, sizeof(line))) {
		r->fault = BCI_POWER_FAILED;
		bci_message(r->why, sizeof(r->why), "BMC %s:%u: %s", ipmi->host, ipmi->port, line);
		return;
	}
	if (out->timed_out) {
		r->fault = BCI_POWER_NO_ANSWER;
		bci_message(r->why, sizeof(r->why),
			    "BMC %s:%u does not answer (ipmitool still waiting after %lu s)", ipmi->host,
			    ipmi->port, p->timeout);
		return;
	}
	for (size_t i = 0; i < sizeof(refusals) / sizeof(*refusals); i++)
		if (line_with(out->text, refusals[i], line, sizeof(line))) {
			r->fault = BCI_POWER_REFUSED;
			bci_message(r->why, sizeof(r->why), "BMC %s:%u refuses user %s: %s",
				    ipmi->host, ipmi->port, ipmi->user, line);
			return;
		}
	if (line_with(out->text, "Unable to establish", line, sizeof(line)) ||
	    line_with(out->text, "No response", line, sizeof(line)) ||
	    line_with(out->text, "Get Auth Capabilities error", line, sizeof(line))) {
		r->fault = BCI_POWER_NO_ANSWER;
		bci_message(r->why, sizeof(r->why),
			    "BMC %s:%u does not answer (%d calls of %d tries, %d s each)", ipmi->host,
			    ipmi->port, BCI_POWER_IPMI_CALLS, BCI_POWER_IPMI_RETRIES + 1,
			    BCI_POWER_IPMI_TRY_SECONDS);
		return;
	}
	r->fault = BCI_POWER_FAILED;
	bci_spawn_describe(out->status, how, sizeof(how));
	last_line(out->text, line, sizeof(line));
	bci_message(r->why, sizeof(r->why), "BMC %s:%u: ipmitool %s%s%s", ipmi->host, ipmi->port,
		    how, line[0] ? ": " : "", line);
}

/*
 * `ipmitool ... chassis power @verb`: 0 with what it printed in @out, -EIO
 * with @r's fault. A call the BMC did not answer is made again, up to
 * BCI_POWER_IPMI_CALLS; a refusal is not (a BMC may lock a user out).
 */
static int ipmi_call(const struct bci_power *p, const char *verb, struct run_output *out,
		     struct bci_power_result *r)
{
	const struct bci_inventory_ipmi *ipmi = &p->machine->ipmi;
	char port[8], try_seconds[8], retries[8];
	char *argv[] = {
		(char *)p->ipmitool, "-I", "lanplus", "-C", "3", "-N", try_seconds, "-R", retries,
		"-v", "-H", ipmi->host, "-p", port, "-U", ipmi->user, "-f", ipmi->password_file,
		"chassis", "power", (char *)verb, NULL,
	};
	int ret;

	snprintf(port, sizeof(port), "%u", ipmi->port);
	snprintf(try_seconds, sizeof(try_seconds), "%d", BCI_POWER_IPMI_TRY_SECONDS);
	snprintf(retries, sizeof(retries), "%d", BCI_POWER_IPMI_RETRIES);
	for (int call = 1; call <= BCI_POWER_IPMI_CALLS; call++) {
		ret = run(argv, p->timeout, out, r->why, sizeof(r->why));
		if (ret == -ENOMEM)
			return ret;
		if (ret < 0) {
			/* Not even killed (-ETIME): stuck waiting for the BMC; else not started. */
			r->fault = ret == -ETIME ? BCI_POWER_NO_ANSWER : BCI_POWER_UNUSABLE;
			return -EIO;
		}
		if (exited_zero(out))
			return 0;
		ipmi_fault(p, out, r);
		if (r->fault != BCI_POWER_NO_ANSWER)
			return -EIO;
	}
	return -EIO;
}

static int ipmi_status(const struct bci_power *p, struct bci_power_result *r)
{
	struct run_output out;
	int ret = ipmi_call(p, "status", &out, r);

	if (ret < 0)
		return ret;
	if (strstr(out.text, "Chassis Power is on")) {
		r->state = BCI_POWER_IS_ON;
		return 0;
	}
	if (strstr(out.text, "Chassis Power is off")) {
		r->state = BCI_POWER_IS_OFF;
		return 0;
	}
	char line[160];

	last_line(out.text, line, sizeof(line));
	r->fault = BCI_POWER_FAILED;
	bci_message(r->why, sizeof(r->why), "BMC %s:%u: chassis power status said '%s'",
		    p->machine->ipmi.host, p->machine->ipmi.port, line);
	return -EIO;
}

static int ipmi_act(const struct bci_power *p, enum bci_power_action action,
		    struct bci_power_result *r)
{
	const struct bci_inventory_ipmi *ipmi = &p->machine->ipmi;
	const char *verb = bci_power_action_name(action);
	struct run_output out;
	int ret;

	if (access(p->ipmitool, X_OK) < 0) {
		r->fault = BCI_POWER_UNUSABLE;
		bci_message(r->why, sizeof(r->why), "ipmitool %s: %s", p->ipmitool, strerror(errno));
		return -EIO;
	}
	if (access(ipmi->password_file, R_OK) < 0) {
		r->fault = BCI_POWER_UNUSABLE;
		bci_message(r->why, sizeof(r->why), "BMC %s:%u: password file %s: %s", ipmi->host,
			    ipmi->port, ipmi->password_file, strerror(errno));
		return -EIO;
	}
	if ((ret = ipmi_status(p, r)) < 0 || action == BCI_POWER_STATUS)
		return ret;
	if (action == BCI_POWER_ON && r->state == BCI_POWER_IS_ON) {
		bci_message(r->why, sizeof(r->why), "BMC %s:%u: on already", ipmi->host, ipmi->port);
		return 0;
	}
	/* A chassis that is off is powered on: cycling it is refused or does nothing. */
	if (action == BCI_POWER_CYCLE && r->state == BCI_POWER_IS_OFF)
		verb = "on";
	if ((ret = ipmi_call(p, verb, &out, r)) < 0)
		return ret;
	bci_message(r->why, sizeof(r->why), "BMC %s:%u: chassis power %s (it was %s)", ipmi->host,
		    ipmi->port, verb, bci_power_state_name(r->state));
	return 0;
}

/* ---- both ---- */

bool bci_power_fault_takes_out(enum bci_power_fault fault)
{
	return fault == BCI_POWER_NO_ANSWER || fault == BCI_POWER_REFUSED ||
	       fault == BCI_POWER_UNUSABLE || fault == BCI_POWER_NOT_TAKEN;
}

const char *bci_power_state_name(enum bci_power_state state)
{
	return state == BCI_POWER_IS_ON ? "on" : state == BCI_POWER_IS_OFF ? "off" : "unknown";
}

const char *bci_power_action_name(enum bci_power_action action)
{
	switch (action) {
	case BCI_POWER_ON:
		return "on";
	case BCI_POWER_OFF:
		return "off";
	case BCI_POWER_CYCLE:
		return "cycle";
	case BCI_POWER_STATUS:
		break;
	}
	return "status";
}

/* Reads the state until it is @want or the power timeout has passed. */
static int read_back(const struct bci_power *p, enum bci_power_state want,
		     struct bci_power_result *r)
{
	long deadline = monotonic_ms() + (long)p->timeout * 1000;
	char done[sizeof(r->why)];
	int ret;

	snprintf(done, sizeof(done), "%s", r->why);
	for (;;) {
		ret = p->machine->power_driver == BCI_POWER_DRIVER_IPMI ? ipmi_status(p, r)
									  : command_status(p, r);
		if (ret < 0)
			return ret;
		if (r->state == want || r->state == BCI_POWER_UNKNOWN)
			break;
		if (monotonic_ms() >= deadline) {
			r->fault = BCI_POWER_NOT_TAKEN;
			bci_message(r->why, sizeof(r->why), "%s, yet it still reads %s after %lu s",
				    done, bci_power_state_name(r->state), p->timeout);
			return -EIO;
		}
		usleep(READ_BACK_STEP_MS * 1000);
	}
	bci_message(r->why, sizeof(r->why), "%s; %s", done,
		    r->state == BCI_POWER_UNKNOWN ? "state not read back (no power-status)"
						  : r->state == BCI_POWER_IS_ON ? "reads on"
										: "reads off");
	return 0;
}

int bci_power_act(const struct bci_power *p, enum bci_power_action action,
		  struct bci_power_result *r)
{
	int ret;

	memset(r, 0, sizeof(*r));
	switch (p->machine->power_driver) {
	case BCI_POWER_DRIVER_NONE:
		r->fault = BCI_POWER_FAILED;
		bci_message(r->why, sizeof(r->why), "no power driver");
		return -ENOTSUP;
	case BCI_POWER_DRIVER_COMMAND:
		ret = command_act(p, action, r);
		break;
	case BCI_POWER_DRIVER_IPMI:
		ret = ipmi_act(p, action, r);
		break;
	default:
		return -EINVAL;
	}
	if (ret < 0 || action == BCI_POWER_STATUS)
		return ret;
	return read_back(p, action == BCI_POWER_OFF ? BCI_POWER_IS_OFF : BCI_POWER_IS_ON, r);
}
