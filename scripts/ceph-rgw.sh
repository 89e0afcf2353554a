#!/bin/bash
# Single-node Ceph RADOS Gateway (S3) for tests, 127.0.0.1 only, no cephx.
#   ceph-rgw.sh init  DIR [bluestore|memstore]  create a fresh cluster in DIR and start it
#   ceph-rgw.sh start DIR                       start an existing cluster (data kept)
#   ceph-rgw.sh stop  DIR                       SIGTERM rgw, osd, mon (by their pid files) and wait
# After init/start, DIR/env holds S3_ENDPOINT, S3_AK, S3_SK, S3_PIDS.
#
# Owned by the project (it started as ../shared/s3/ceph-rgw.sh); scripts/s3-test-server.ts
# runs it once per test run, in a fresh temporary DIR, and exports the env to the S3 tests as
# FILEHAVEN_TEST_S3_ENDPOINT / _ACCESS_KEY / _SECRET_KEY. Needs the Debian packages
#   apt-get install -y --no-install-recommends radosgw ceph-mon ceph-osd
# (about 60 packages, 58 MiB). One monitor, one OSD on a sparse 20 GiB file in DIR (bluestore)
# or in memory (memstore), radosgw on a random free port, the seven rgw pools created up front
# (radosgw would otherwise create them one by one at first use), and the S3 user
# TESTAK / TESTSECRETKEY. init takes 10-15 s, stop 6-7 s; the daemons use ~150 MB idle.
# Clients need requestChecksumCalculation WHEN_REQUIRED (radosgw refuses aws-chunked bodies).
set -euo pipefail
CMD=${1:?init|start|stop}; D=$(realpath -m "${2:?dir}"); STORE=${3:-bluestore}
C=(-c "$D/ceph.conf")
freeport() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
wait_ready() {
  . "$D/env"
  for _ in $(seq 1 600); do curl -sf -o /dev/null "$S3_ENDPOINT/" && return 0; sleep 0.1; done
  echo "radosgw not ready; see $D/log" >&2; return 1
}
T0=$(date +%s%N); t() { [ -n "${S3_CEPH_TIMING:-}" ] && echo "  $(( ($(date +%s%N)-T0)/1000000 )) ms: $*" >&2 || true; }
start_daemons() {
  [ -n "${1:-}" ] || { ceph-mon "${C[@]}" -i a -f >>"$D/log/mon.out" 2>&1 & echo $! >"$D/mon.pid"; }
  ceph-osd "${C[@]}" -i 0 -f >>"$D/log/osd.out" 2>&1 & echo $! >"$D/osd.pid"
  radosgw "${C[@]}" -n client.rgw.a -f >>"$D/log/rgw.out" 2>&1 & echo $! >"$D/rgw.pid"
  sed -i '/^S3_PIDS=/d' "$D/env"; echo "S3_PIDS=$(cat "$D/mon.pid"),$(cat "$D/osd.pid"),$(cat "$D/rgw.pid")" >>"$D/env"
}
need() {
  local missing=()
  for c in "$@"; do command -v "$c" >/dev/null 2>&1 || missing+=("$c"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "ceph-rgw.sh: missing ${missing[*]}; install: apt-get install -y --no-install-recommends radosgw ceph-mon ceph-osd" >&2
  exit 3
}
case "$CMD" in
init)
  need ceph ceph-mon ceph-osd ceph-authtool monmaptool radosgw radosgw-admin uuidgen curl node
  rm -rf "$D"; mkdir -p "$D"/{mon/ceph-a,osd/ceph-0,run,log,rgw}
  MONP=$(freeport); RGWP=$(freeport); FSID=$(uuidgen)
  cat >"$D/ceph.conf" <<CONF
[global]
fsid = $FSID
mon host = v2:127.0.0.1:$MONP
public addr = 127.0.0.1
ms bind msgr1 = false
auth cluster required = none
auth service required = none
auth client required = none
ms mon client mode = crc
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
mon max pg per osd = 1000
osd crush chooseleaf type = 0
mon warn on pool no redundancy = false
mon data avail warn = 1
mon data avail crit = 0
paxos propose interval = 0.1
run dir = $D/run
admin socket = $D/run/\$name.asok
log file = $D/log/\$name.log
mon data = $D/mon/\$cluster-\$id
osd data = $D/osd/\$cluster-\$id
keyring = $D/keyring
osd objectstore = $STORE
bluestore block create = true
bluestore block size = 21474836480
bluestore fsck on mount = false
osd memory target = 939524096
memstore device bytes = 4294967296
[client.rgw.a]
rgw frontends = beast endpoint=127.0.0.1:$RGWP
rgw data = $D/rgw
# Tests change bucket policies and expect the next request to obey them; the metadata
# cache kept an old policy for seconds (a denied read went through).
rgw cache enabled = false
CONF
  cat >"$D/env" <<ENV
S3_ENDPOINT=http://127.0.0.1:$RGWP
S3_AK=TESTAK
S3_SK=TESTSECRETKEY
ENV
  ceph-authtool --create-keyring "$D/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
  monmaptool --create --fsid "$FSID" --addv a "[v2:127.0.0.1:$MONP]" "$D/monmap" >/dev/null
  ceph-mon "${C[@]}" --mkfs -i a --monmap "$D/monmap" --keyring "$D/keyring"
  OSDUUID=$(uuidgen)
  ceph-mon "${C[@]}" -i a -f >>"$D/log/mon.out" 2>&1 & echo $! >"$D/mon.pid"
  t "mon started"
  ceph "${C[@]}" --connect-timeout 30 osd new "$OSDUUID" >/dev/null
  t "osd registered"
  ceph-osd "${C[@]}" -i 0 --mkfs --osd-uuid "$OSDUUID" >"$D/log/osd-mkfs.out" 2>&1
  t "osd mkfs done"
  ceph-osd "${C[@]}" -i 0 -f >>"$D/log/osd.out" 2>&1 & echo $! >"$D/osd.pid"
  for p in .rgw.root default.rgw.control default.rgw.meta default.rgw.log \
           default.rgw.buckets.index default.rgw.buckets.non-ec default.rgw.buckets.data; do
    ceph "${C[@]}" osd pool create "$p" 8 8 >/dev/null 2>&1
    ceph "${C[@]}" osd pool application enable "$p" rgw >/dev/null 2>&1
  done
  t "pools created"
  radosgw "${C[@]}" -n client.rgw.a -f >>"$D/log/rgw.out" 2>&1 & echo $! >"$D/rgw.pid"
  echo "S3_PIDS=$(cat "$D/mon.pid"),$(cat "$D/osd.pid"),$(cat "$D/rgw.pid")" >>"$D/env"
  wait_ready
  t "rgw ready"
  radosgw-admin "${C[@]}" -n client.admin user create --uid=test --display-name=test \
    --access-key=TESTAK --secret-key=TESTSECRETKEY >/dev/null
  t "user created"
  ;;
start) need ceph-mon ceph-osd radosgw curl; start_daemons; wait_ready ;;
stop)
  # A pid file may outlive its daemon (SIGKILL, reboot) and the pid be someone else's now:
  # signal it only while it is still the daemon the file names (and not a zombie whose
  # parent has yet to reap it: that one is gone).
  running() { kill -0 "$2" 2>/dev/null && [ "$(cat "/proc/$2/comm" 2>/dev/null)" = "$1" ] &&
    [ "$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "/proc/$2/status" 2>/dev/null)" != Z ]; }
  declare -A COMM=([rgw]=radosgw [osd]=ceph-osd [mon]=ceph-mon)
  # One at a time, clients first: radosgw signalled while the monitor and the OSD go down
  # with it hangs in its shutdown for about 100 s, waiting on a cluster that is gone.
  # SIGKILL after 30 s: a daemon stuck in shutdown must not hang a test run.
  for n in rgw osd mon; do [ -f "$D/$n.pid" ] || continue; p=$(cat "$D/$n.pid")
    if running "${COMM[$n]}" "$p"; then
      kill "$p" 2>/dev/null || true
      end=$((SECONDS + 30))
      while running "${COMM[$n]}" "$p" && [ $SECONDS -lt $end ]; do sleep 0.05; done
      if running "${COMM[$n]}" "$p"; then
        echo "ceph-rgw.sh: ${COMM[$n]} ($p) ignored SIGTERM for 30 s, sending SIGKILL" >&2
        kill -9 "$p" 2>/dev/null || true
        while running "${COMM[$n]}" "$p"; do sleep 0.05; done
      fi
    fi
    rm -f "$D/$n.pid"; done ;;
*) echo "usage: $0 init|start|stop DIR [bluestore|memstore]" >&2; exit 2 ;;
esac
