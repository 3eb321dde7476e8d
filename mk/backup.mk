# Backup and restore of the local cluster (`make up`). Included by the Makefile.
#
#   make backup         back the whole cluster up now; the last line names it and says where it is:
#                       `backup <name> in <where>`. BACKUP_NAME=... gives it a name (default kvlab-<UTC time>).
#   make backups        the complete backups in the target, newest first (the cluster may be down)
#   make restore        BACKUP=<name>|latest [N=3] [FORCE=1]: with the cluster down, restore each node's
#                       data dir ./data/n0..n(N-1) from the backup (a backup of any size: node i of N
#                       gets the old nodes i, i+N, ...), then start N nodes. FORCE=1 replaces data
#                       that is there; without it a node dir that holds data stops the restore.
# Where: BACKUP_TARGET, a directory (default ./backups in the checkout) or s3://bucket[/prefix] with
# S3_ENDPOINT, S3_ACCESS_KEY, S3_SECRET_KEY, S3_REGION (scripts/s3-server.sh starts a local one).
#   make lab-backup-bench  what a backup and a restore cost on a cluster of its own: KEYS (1000000) keys of
#                       VALUE_SIZE (100) bytes on NODES (1) nodes: a full backup, an incremental one, the
#                       disk they take, the restore; keys/s and MiB/s (scripts/backup-bench.sh; KEEP_DATA=1
#                       keeps the filled data for the next run) -> reports/<timestamp>-backup-bench
# `make up` gives the nodes the same target (BACKUP_TARGET is set in the Makefile). BACKUP_TIMEOUT: seconds `make backup` waits (3600).

.PHONY: backup backups restore lab-backup-bench lab-disaster-smoke

backup: ## back the local cluster up now (to BACKUP_TARGET, default ./backups); last line: backup <name> in <where>
	@$(CLUSTER) backup $(BACKUP_NAME)

backups: build ## list the complete backups in BACKUP_TARGET, newest first
	@$(CLUSTER) backups

restore: build ## with the cluster down: restore every node from BACKUP=<name>|latest into N nodes [FORCE=1], then start them
	@test -n "$(BACKUP)" || { echo "usage: make restore BACKUP=<name>|latest [N=3] [FORCE=1]   (make backups lists them)"; exit 2; }
	@FORCE=$(FORCE) $(CLUSTER) restore $(BACKUP) $(N)

lab-backup-bench: build lab-tools ## backup and restore time, keys/s, MiB/s and disk for KEYS (1M) keys on NODES (1) nodes -> reports/
	JAVA=$(JAVA) scripts/backup-bench.sh

lab-disaster-smoke: ## CI: a short `make lab SCENARIO=disaster` (3 000 keys, 300/s, a 15 s phase; it fails on an acknowledged write missing after the restore, not on speed), then a check of its report
	$(MAKE) lab SCENARIO=disaster NAME=disaster-smoke RATE=300 DURATION=15s WARMUP=3s KEYS=3000 TOOL=k6 GATE=data
	cd loadtests && $(LAB_PY) -m lab check --strict "$$(ls -d $(CURDIR)/reports/*-disaster-smoke | tail -n 1)"
