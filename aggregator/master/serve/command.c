// SPDX-License-Identifier: MIT
/*
 * bootci-aggregator serve: the CI master's upload server (server.h). The
 * command line, the signals (SIGTERM or SIGINT: finish what is in flight and
 * stop), and the port file that tells scripts where a port-0 server listens.
 */
#include "../commands.h"
#include "fsutil.h"
#include "server.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* N, NK, NM, NG (binary units). */
static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (*end) {
	case 'K': shift = 10; end++; break;
	case 'M': shift = 20; end++; break;
	case 'G': shift = 30; end++; break;
	case 'T': shift = 40; end++; break;
	}
	if (*end || v == 0 || v > (UINT64_MAX >> shift))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

/* A whole number from 0 to @max (what 0 means for each option: bootci-aggregator-serve(1)). */
static int parse_count(const char *s, unsigned long max, unsigned long *out)
{
	unsigned long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static void serve_usage(FILE *out)
{
	fprintf(out,
		"usage: bootci-aggregator serve --data DIR [--listen ADDR:PORT] [--tokens FILE]\n"
		"         [--cert FILE --key FILE] [--store URL] [--port-file FILE] [--threads N]\n"
		"         [--workers N]\n"
		"         [--max-connections N] [--max-per-ip N] [--max-per-token N]\n"
		"         [--header-timeout SEC] [--idle-timeout SEC] [--request-timeout SEC]\n"
		"         [--max-incoming SIZE] [--incoming-max-age SEC]\n"
		"         [--max-body SIZE] [--max-entries N] [--max-unpacked SIZE] [--max-file SIZE]\n"
		"         [--max-path N] [--max-manifest SIZE] [--console-boot-max SIZE]\n"
		"         [--console-silent SEC]\n"
		"SIZE: N, NK, NM, NG or NT bytes. See bootci-aggregator-serve(1).\n");
}

static int write_port_file(const char *path, unsigned port)
{
	char text[16];
	int len = snprintf(text, sizeof(text), "%u\n", port);

	return bci_write_file_atomic(path, text, (size_t)len, 0644);
}

/*
 * The command line into @config and @port_file. Returns -1 to go on, or the
 * exit code to end with now (0 after --help, 2 for a usage error).
 */
static int serve_options(int argc, char **argv, struct bci_serve_config *config,
			 const char **port_file)
{
	static const struct option options[] = {
		{ "data", required_argument, NULL, 'd' },
		{ "listen", required_argument, NULL, 'l' },
		{ "tokens", required_argument, NULL, 't' },
		{ "cert", required_argument, NULL, 'c' },
		{ "key", required_argument, NULL, 'k' },
		{ "store", required_argument, NULL, 's' },
		{ "port-file", required_argument, NULL, 'p' },
		{ "threads", required_argument, NULL, 'T' },
		{ "workers", required_argument, NULL, 'W' },
		{ "max-connections", required_argument, NULL, 'C' },
		{ "max-per-ip", required_argument, NULL, 'N' },
		{ "max-per-token", required_argument, NULL, 'K' },
		{ "header-timeout", required_argument, NULL, 'H' },
		{ "idle-timeout", required_argument, NULL, 'I' },
		{ "request-timeout", required_argument, NULL, 'R' },
		{ "max-body", required_argument, NULL, 'B' },
		{ "max-incoming", required_argument, NULL, 'Q' },
		{ "incoming-max-age", required_argument, NULL, 'A' },
		{ "max-entries", required_argument, NULL, 'E' },
		{ "max-unpacked", required_argument, NULL, 'U' },
		{ "max-file", required_argument, NULL, 'F' },
		{ "max-path", required_argument, NULL, 'P' },
		{ "max-manifest", required_argument, NULL, 'M' },
		{ "console-boot-max", required_argument, NULL, 'O' },
		{ "console-silent", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long number = 0;
	int opt, ret;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		ret = 0;
		switch (opt) {
		case 'd': config->data_dir = optarg; break;
		case 'l': config->listen = optarg; break;
		case 't': config->tokens = optarg; break;
		case 'c': config->cert = optarg; break;
		case 'k': config->key = optarg; break;
		case 's': config->store_url = optarg; break;
		case 'p': *port_file = optarg; break;
		case 'T':
			ret = parse_count(optarg, 1024, &number);
			config->threads = (unsigned)number;
			ret = number ? ret : -EINVAL;
			break;
		case 'W':
			ret = parse_count(optarg, 1024, &number);
			config->workers = (unsigned)number;
			break;
		case 'C':
			ret = parse_count(optarg, 65536, &number);
			config->max_connections = (unsigned)number;
			ret = number ? ret : -EINVAL;
			break;
		case 'N':
			ret = parse_count(optarg, 65536, &number);
			config->max_per_ip = (unsigned)number;
			break;
		case 'K':
			ret = parse_count(optarg, 65536, &number);
			config->max_per_token = (unsigned)number;
			break;
		case 'H':
			ret = parse_count(optarg, 3600, &number);
			config->header_timeout = (unsigned)number;
			ret = number ? ret : -EINVAL;
			break;
		case 'I':
			ret = parse_count(optarg, 86400, &number);
			config->idle_timeout = (unsigned)number;
			ret = number ? ret : -EINVAL;
			break;
		case 'R':
			ret = parse_count(optarg, 7 * 86400, &number);
			config->request_timeout = (unsigned)number;
			ret = number ? ret : -EINVAL;
			break;
		case 'B': ret = parse_size(optarg, &config->max_body); break;
		case 'Q': ret = parse_size(optarg, &config->max_incoming); break;
		case 'A':
			ret = parse_count(optarg, 366 * 86400, &number);
			config->incoming_max_age = number;
			ret = number ? ret : -EINVAL;
			break;
		case 'E': ret = parse_size(optarg, &config->limits.max_entries); break;
		case 'U': ret = parse_size(optarg, &config->limits.max_unpacked); break;
		case 'F': ret = parse_size(optarg, &config->limits.max_file); break;
		case 'M': ret = parse_size(optarg, &config->limits.max_manifest); break;
		case 'O': ret = parse_size(optarg, &config->console_boot_max); break;
		case 'S':
			ret = parse_count(optarg, 86400, &number);
			config->console_silent = (unsigned)number;
			ret = number ? ret : -EINVAL;
			break;
		case 'P':
			ret = parse_count(optarg, BCI_MANIFEST_PATH_MAX, &number);
			config->limits.max_path = number;
			break;
		case 'h':
			serve_usage(stdout);
			return 0;
		default:
			serve_usage(stderr);
			return 2;
		}
		if (ret < 0) {
			const struct option *o = options;

			while (o->val != opt)
				o++;
			fprintf(stderr, "bootci-aggregator serve: --%s '%s': %s\n", o->name, optarg,
				strchr("BUMEFOQ", opt) ? "not a size (N, NK, NM, NG, NT; above 0)"
						     : "not a number in range");
			return 2;
		}
	}
	if (optind != argc || !config->data_dir) {
		fprintf(stderr, "bootci-aggregator serve: %s\n",
			optind != argc ? "unexpected argument" : "--data DIR is required");
		serve_usage(stderr);
		return 2;
	}
	return -1;
}

int bci_cmd_serve(int argc, char **argv)
{
	struct bci_serve_config config;
	const char *port_file = NULL;
	struct bci_server *server;
	char err[1024];
	sigset_t signals;
	int sig, ret;

	bci_serve_config_default(&config);
	ret = serve_options(argc, argv, &config, &port_file);
	if (ret >= 0)
		return ret;

	/* Blocked before any thread starts, so that only sigwait() below sees them. */
	sigemptyset(&signals);
	sigaddset(&signals, SIGTERM);
	sigaddset(&signals, SIGINT);
	pthread_sigmask(SIG_BLOCK, &signals, NULL);
	signal(SIGPIPE, SIG_IGN);

	ret = bci_server_start(&config, &server, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "bootci-aggregator serve: %s\n", err);
		return 1;
	}
	fprintf(config.log, "serve: listening on %s (port %u), data in %s%s\n", config.listen,
		bci_server_port(server), config.data_dir, config.cert ? ", TLS" : "");
	fflush(config.log);
	if (port_file && (ret = write_port_file(port_file, bci_server_port(server))) < 0) {
		fprintf(stderr, "bootci-aggregator serve: %s: %s\n", port_file, strerror(-ret));
		bci_server_stop(server);
		return 1;
	}
	do {
		ret = sigwait(&signals, &sig);
	} while (ret != 0);
	fprintf(config.log, "serve: %s: stopping\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
	fflush(config.log);
	bci_server_stop(server);
	fprintf(config.log, "serve: stopped\n");
	return 0;
}
