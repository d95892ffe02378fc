#!/bin/sh
# Temporal's setup for docker-compose.yml, run in temporalio/admin-tools:
#   temporal-setup.sh schema      creates the databases and brings both schemas to this
#                                 release's version (safe to run again on an existing volume)
#   temporal-setup.sh namespace   waits for the server, then creates the namespace `default`
set -eu

sql() {
  temporal-sql-tool --plugin postgres12 --ep postgresql -p 5432 -u temporal --db "$@"
}

case "$1" in
  schema)
    for db in temporal temporal_visibility; do
      schema=$([ "$db" = temporal ] && echo temporal || echo visibility)
      # A database and a schema made by an earlier run are kept: only the upgrade must succeed.
      sql "$db" create || echo "database $db exists"
      sql "$db" setup-schema -v 0.0 || echo "schema of $db exists"
      sql "$db" update-schema -d "/etc/temporal/schema/postgresql/v12/$schema/versioned"
    done
    ;;
  namespace)
    tries=0
    until temporal operator cluster health --address "$TEMPORAL_ADDRESS"; do
      tries=$((tries + 1))
      if [ "$tries" -ge 60 ]; then
        echo "Temporal at $TEMPORAL_ADDRESS is not healthy after 60 tries" >&2
        exit 1
      fi
      sleep 2
    done
    temporal operator namespace describe -n default --address "$TEMPORAL_ADDRESS" \
      || temporal operator namespace create -n default --address "$TEMPORAL_ADDRESS"
    ;;
  *)
    echo "usage: temporal-setup.sh schema|namespace" >&2
    exit 2
    ;;
esac
