// SPDX-License-Identifier: MIT
/*
 * serve's gate (internal.h): the connections a client opens wait here, not in
 * one of libmicrohttpd's slots, until their request's head is complete; then
 * the head's token decides whether they get a slot:
 *
 *   a machine's token   a slot, up to --max-per-token connections per
 *                       machine (past it: 429, try later)
 *   none, or nobody's   a slot among at most half of --max-connections
 *                       (past it: 503, try later); health, pages, netboot
 *   head not complete   closed --header-timeout seconds after the connection
 *   in time             opened, however it trickles (a slowloris)
 *
 * so clients that never finish their heads, however many, hold only a socket
 * each in the gate, and the owners of tokens keep their slots. A connection
 * that waits here is read with MSG_PEEK: libmicrohttpd, once it has the
 * socket (MHD_add_connection()), reads the same bytes. Over TLS the head is
 * not readable here: serve then listens through libmicrohttpd alone.
 */
#include "internal.h"
#include "auth.h"
#include "http.h"
#include "message.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

/* The bytes of a head read here; a longer one goes to libmicrohttpd, which refuses it. */
#define GATE_HEAD_MAX 16384
/* Connections waiting for their heads at once; past it the oldest is closed. */
#define GATE_PENDING_MAX 4096

struct gate_conn {
	int fd;				/* -1: a free entry */
	bool admitted;			/* handed to libmicrohttpd */
	const char *machine;		/* admitted with this machine's token (the token file's) */
	struct sockaddr_storage addr;
	socklen_t addr_len;
	time_t deadline;		/* waiting: its head must be complete by then (monotonic) */
};

struct serve_gate {
	int listener, epoll, wake;
	unsigned port;
	pthread_t thread;
	bool running;
	pthread_mutex_t lock;		/* the entries: libmicrohttpd's threads free admitted ones */
	struct gate_conn *conns;
	size_t size, pending_max;
	unsigned pending, anonymous;
	unsigned long timed_out;	/* heads not complete in time, not logged yet */
};

static time_t monotonic_now(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec;
}

static void address_text(const struct gate_conn *c, char *out, size_t size)
{
	const struct sockaddr *sa = (const struct sockaddr *)&c->addr;

	snprintf(out, size, "?");
	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out, (socklen_t)size);
	else if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, out,
			  (socklen_t)size);
}

static bool same_address(const struct gate_conn *a, const struct gate_conn *b)
{
	const struct sockaddr *x = (const struct sockaddr *)&a->addr;
	const struct sockaddr *y = (const struct sockaddr *)&b->addr;

	if (x->sa_family != y->sa_family)
		return false;
	if (x->sa_family == AF_INET)
		return ((const struct sockaddr_in *)x)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)y)->sin_addr.s_addr;
	if (x->sa_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)x)->sin6_addr,
			       &((const struct sockaddr_in6 *)y)->sin6_addr, sizeof(struct in6_addr));
	return false;
}

/* Closes a waiting connection and frees its entry (the gate's thread). */
static void pending_close(struct serve_gate *g, struct gate_conn *c)
{
	epoll_ctl(g->epoll, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	pthread_mutex_lock(&g->lock);
	c->fd = -1;
	g->pending--;
	pthread_mutex_unlock(&g->lock);
}

/* Frees an admitted entry (g->lock held). */
static void admitted_free(struct serve_gate *g, struct gate_conn *c)
{
	if (!c->machine)
		g->anonymous--;
	c->fd = -1;
	c->admitted = false;
	c->machine = NULL;
}

/* A refusal the gate answers itself, best effort (the socket is not blocking), then closes. */
static void refuse(struct bci_server *s, struct gate_conn *c, int status, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void refuse(struct bci_server *s, struct gate_conn *c, int status, const char *fmt, ...)
{
	char why[400], body[512], answer[1024], address[INET6_ADDRSTRLEN];
	va_list ap;
	int n;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	/* @why is the server's own text, with names the gate checked: nothing to escape. */
	n = snprintf(body, sizeof(body), "{\"error\":\"%s\"}\n", why);
	n = snprintf(answer, sizeof(answer),
		     "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
		     "Connection: close\r\n\r\n%s", status,
		     status == 429 ? "Too Many Requests" : "Service Unavailable", n, body);
	if (send(c->fd, answer, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		/* Gone already: nothing to tell it. */
	}
	address_text(c, address, sizeof(address));
	pthread_mutex_lock(&s->lock);
	fprintf(s->config.log, "serve: %s gate %d: %s\n", address, status, why);
	fflush(s->config.log);
	pthread_mutex_unlock(&s->lock);
	pending_close(s->gate, c);
}

/* The head is complete (or too long to read here): a slot, or a refusal. */
static void decide(struct bci_server *s, struct gate_conn *c, const struct bci_http_head *head)
{
	struct serve_gate *g = s->gate;
	const char *machine = NULL;
	unsigned open_count = 0, anonymous_max = s->config.max_connections / 2;
	int fd = c->fd;

	if (head && head->has_token && s->tokens)
		machine = bci_tokens_machine(s->tokens, head->token);
	pthread_mutex_lock(&g->lock);
	if (machine)
		for (size_t i = 0; i < g->size; i++)
			open_count += g->conns[i].fd >= 0 && g->conns[i].admitted &&
				      g->conns[i].machine == machine;
	if (machine && s->config.max_per_token && open_count >= s->config.max_per_token) {
		pthread_mutex_unlock(&g->lock);
		refuse(s, c, 429, "machine %s has %u connections open (--max-per-token %u): try later",
		       machine, open_count, s->config.max_per_token);
		return;
	}
	if (!machine && g->anonymous >= (anonymous_max ? anonymous_max : 1)) {
		pthread_mutex_unlock(&g->lock);
		refuse(s, c, 503, "busy: %u connections without a machine's token open (half of"
		       " --max-connections): try later", g->anonymous);
		return;
	}
	c->admitted = true;
	c->machine = machine;
	g->anonymous += !machine;
	g->pending--;
	pthread_mutex_unlock(&g->lock);
	epoll_ctl(g->epoll, EPOLL_CTL_DEL, fd, NULL);
	if (MHD_add_connection(s->daemon, fd, (const struct sockaddr *)&c->addr, c->addr_len) !=
	    MHD_YES) {
		/* libmicrohttpd closed it (its limits); free the entry unless its notice did. */
		pthread_mutex_lock(&g->lock);
		if (c->fd == fd && c->admitted)
			admitted_free(g, c);
		pthread_mutex_unlock(&g->lock);
	}
}

/* New bytes on a waiting connection: is its head complete yet? */
static void peek(struct bci_server *s, struct gate_conn *c)
{
	static char buf[GATE_HEAD_MAX];	/* the gate's thread alone */
	struct bci_http_head head;
	ssize_t n = recv(c->fd, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		pending_close(s->gate, c);	/* the client went away */
		return;
	}
	if (bci_http_head_scan(buf, (size_t)n, &head) == 1)
		decide(s, c, &head);
	else if ((size_t)n == sizeof(buf))
		decide(s, c, NULL);
}

/* Closes the waiting connections past their deadline; the oldest one too when @evict. */
static void sweep(struct serve_gate *g, bool evict)
{
	time_t now = monotonic_now();
	struct gate_conn *oldest = NULL;

	pthread_mutex_lock(&g->lock);
	for (size_t i = 0; i < g->size; i++) {
		struct gate_conn *c = &g->conns[i];

		if (c->fd < 0 || c->admitted)
			continue;
		if (c->deadline <= now) {
			epoll_ctl(g->epoll, EPOLL_CTL_DEL, c->fd, NULL);
			close(c->fd);
			c->fd = -1;
			g->pending--;
			g->timed_out++;
		} else if (!oldest || c->deadline < oldest->deadline) {
			oldest = c;
		}
	}
	pthread_mutex_unlock(&g->lock);
	if (evict && oldest && g->pending >= g->pending_max) {
		pending_close(g, oldest);
		g->timed_out++;
	}
}

static void accept_all(struct bci_server *s)
{
	struct serve_gate *g = s->gate;

	for (;;) {
		struct sockaddr_storage addr;
		socklen_t len = sizeof(addr);
		struct gate_conn *c = NULL, probe;
		unsigned same = 0;
		int fd = accept4(g->listener, (struct sockaddr *)&addr, &len,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return;	/* EAGAIN: all taken; anything else: the next wake-up retries */
		if (g->pending >= g->pending_max)
			sweep(g, true);
		probe.addr = addr;
		pthread_mutex_lock(&g->lock);
		for (size_t i = 0; i < g->size; i++) {
			if (g->conns[i].fd < 0) {
				c = c ? c : &g->conns[i];
				continue;
			}
			same += s->config.max_per_ip && same_address(&g->conns[i], &probe);
		}
		if (!c || (s->config.max_per_ip && same >= s->config.max_per_ip)) {
			pthread_mutex_unlock(&g->lock);
			close(fd);
			continue;
		}
		c->fd = fd;
		c->admitted = false;
		c->machine = NULL;
		c->addr = addr;
		c->addr_len = len;
		c->deadline = monotonic_now() + s->config.header_timeout;
		g->pending++;
		pthread_mutex_unlock(&g->lock);
		if (epoll_ctl(g->epoll, EPOLL_CTL_ADD, fd,
			      &(struct epoll_event){ .events = EPOLLIN | EPOLLRDHUP | EPOLLET,
						     .data.ptr = c }) < 0) {
			pending_close(g, c);
			continue;
		}
		peek(s, c);	/* what arrived with the connection */
	}
}

static void *gate_main(void *arg)
{
	struct bci_server *s = arg;
	struct serve_gate *g = s->gate;
	struct epoll_event events[64];
	time_t last_sweep = monotonic_now();

	for (;;) {
		int n = epoll_wait(g->epoll, events, 64, 1000);

		for (int i = 0; i < n; i++) {
			if (events[i].data.ptr == &g->wake)
				return NULL;
			if (events[i].data.ptr == &g->listener) {
				accept_all(s);
			} else {
				struct gate_conn *c = events[i].data.ptr;
				bool waiting;

				/* Closed or admitted earlier in this batch: not ours any more. */
				pthread_mutex_lock(&g->lock);
				waiting = c->fd >= 0 && !c->admitted;
				pthread_mutex_unlock(&g->lock);
				if (waiting)
					peek(s, c);
			}
		}
		if (monotonic_now() != last_sweep) {
			last_sweep = monotonic_now();
			sweep(g, false);
			if (g->timed_out) {
				pthread_mutex_lock(&s->lock);
				fprintf(s->config.log, "serve: gate: %lu connection(s) closed without a"
					" complete request head within %u s (--header-timeout)\n",
					g->timed_out, s->config.header_timeout);
				fflush(s->config.log);
				pthread_mutex_unlock(&s->lock);
				g->timed_out = 0;
			}
		}
	}
}

int serve_gate_listen(struct bci_server *s, const struct sockaddr_storage *addr, char *err,
		      size_t err_size)
{
	struct serve_gate *g = calloc(1, sizeof(*g));
	socklen_t len = addr->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
						    : sizeof(struct sockaddr_in);
	struct sockaddr_storage bound;
	struct rlimit files;
	int one = 1, ret;

	if (!g)
		return -ENOMEM;
	s->gate = g;
	g->listener = g->epoll = g->wake = -1;
	pthread_mutex_init(&g->lock, NULL);
	/* A quarter of the descriptors this process may open wait here at most. */
	g->pending_max = GATE_PENDING_MAX;
	if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur / 4 < g->pending_max)
		g->pending_max = files.rlim_cur / 4 > 16 ? files.rlim_cur / 4 : 16;
	g->size = g->pending_max + s->config.max_connections + 16;
	g->conns = calloc(g->size, sizeof(*g->conns));
	if (!g->conns)
		return -ENOMEM;
	for (size_t i = 0; i < g->size; i++)
		g->conns[i].fd = -1;
	g->listener = socket(addr->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (g->listener < 0 ||
	    setsockopt(g->listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(g->listener, (const struct sockaddr *)addr, len) < 0 ||
	    listen(g->listener, 1024) < 0) {
		ret = -errno;
		bci_message(err, err_size, "cannot listen on %s: %s", s->config.listen,
			    strerror(errno));
		return ret;
	}
	len = sizeof(bound);
	if (getsockname(g->listener, (struct sockaddr *)&bound, &len) == 0)
		g->port = ntohs(bound.ss_family == AF_INET6 ?
				((struct sockaddr_in6 *)&bound)->sin6_port :
				((struct sockaddr_in *)&bound)->sin_port);
	return 0;
}

unsigned serve_gate_port(const struct bci_server *s)
{
	return s->gate ? s->gate->port : 0;
}

int serve_gate_start(struct bci_server *s, char *err, size_t err_size)
{
	struct serve_gate *g = s->gate;
	int ret;

	g->epoll = epoll_create1(EPOLL_CLOEXEC);
	g->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (g->epoll < 0 || g->wake < 0 ||
	    epoll_ctl(g->epoll, EPOLL_CTL_ADD, g->listener,
		      &(struct epoll_event){ .events = EPOLLIN, .data.ptr = &g->listener }) < 0 ||
	    epoll_ctl(g->epoll, EPOLL_CTL_ADD, g->wake,
		      &(struct epoll_event){ .events = EPOLLIN, .data.ptr = &g->wake }) < 0) {
		ret = -errno;
		bci_message(err, err_size, "the gate: %s", strerror(errno));
		return ret;
	}
	if ((ret = -pthread_create(&g->thread, NULL, gate_main, s)) < 0) {
		bci_message(err, err_size, "the gate: %s", strerror(-ret));
		return ret;
	}
	g->running = true;
	return 0;
}

void serve_gate_stop(struct bci_server *s)
{
	struct serve_gate *g = s->gate;
	uint64_t one = 1;

	if (!g)
		return;
	if (g->running && write(g->wake, &one, sizeof(one)) == sizeof(one))
		pthread_join(g->thread, NULL);
	g->running = false;
	if (g->listener >= 0)
		close(g->listener);
	g->listener = -1;
	/* The waiting connections go; the admitted ones are libmicrohttpd's. */
	for (size_t i = 0; g->conns && i < g->size; i++)
		if (g->conns[i].fd >= 0 && !g->conns[i].admitted)
			pending_close(g, &g->conns[i]);
}

void serve_gate_free(struct bci_server *s)
{
	struct serve_gate *g = s->gate;

	if (!g)
		return;
	serve_gate_stop(s);
	if (g->epoll >= 0)
		close(g->epoll);
	if (g->wake >= 0)
		close(g->wake);
	pthread_mutex_destroy(&g->lock);
	free(g->conns);
	free(g);
	s->gate = NULL;
}

void serve_gate_notify(void *cls, struct MHD_Connection *connection, void **socket_context,
		       enum MHD_ConnectionNotificationCode code)
{
	struct bci_server *s = cls;
	struct serve_gate *g = s->gate;
	const union MHD_ConnectionInfo *info;

	if (!g)
		return;
	pthread_mutex_lock(&g->lock);
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
		*socket_context = NULL;
		for (size_t i = 0; info && i < g->size; i++)
			if (g->conns[i].fd == info->connect_fd && g->conns[i].admitted)
				*socket_context = &g->conns[i];
	} else if (code == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
		admitted_free(g, *socket_context);
		*socket_context = NULL;
	}
	pthread_mutex_unlock(&g->lock);
}
