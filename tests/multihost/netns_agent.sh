#!/bin/sh
# Open MPI's remote launch agent for tests/multihost (--mca plm_rsh_agent):
# called as ssh would be, `netns_agent.sh [ssh options...] HOST COMMAND...`,
# it runs COMMAND (a shell command line, as ssh passes it on) inside the
# network namespace of the "machine" whose address is HOST, under a UTS
# namespace of its own named after that machine (every namespace shares
# the real machine's hostname otherwise, and Open MPI names nodes by it).
# Only addresses of the harness's own namespaces are accepted: anything
# else is refused (exit 255, as ssh does when a host cannot be reached).
net=${TANDEM_MULTIHOST_NET:-10.231.7}
prefix=${TANDEM_MULTIHOST_PREFIX:-tandem-mh-}
while [ $# -gt 0 ]; do
  case $1 in
    -o|-l|-p|-i|-F) shift 2 ;;  # ssh options with a value
    -*) shift ;;
    *) break ;;
  esac
done
host=$1
shift
case $host in
  "$net".*) last=${host#"$net".} ;;
  *) echo "netns_agent.sh: $host is not a machine of the multihost harness" >&2; exit 255 ;;
esac
case $last in
  ''|*[!0-9]*) echo "netns_agent.sh: bad address $host" >&2; exit 255 ;;
esac
machine=h$((last - 2))
if [ ! -e "/run/netns/$prefix$machine" ]; then
  echo "netns_agent.sh: no namespace $prefix$machine for $host" >&2
  exit 255
fi
exec ip netns exec "$prefix$machine" unshare --uts /bin/sh -c "hostname $prefix$machine && $*"
