# The checks of `make systemd-test`, sourced by test/systemd/run.sh once the
# container has booted (in_ct runs a command inside it). Each check is a
# function that prints what it saw and returns non-zero on failure; `check`
# names it PASS or FAIL. They run in order and build on each other: install,
# run, reload, watchdog, stop, upgrade, purge.

PASSED=0
FAILED=0
check() {
	local name=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	if ((rc == 0)); then
		echo "PASS: $name"
		PASSED=$((PASSED + 1))
	else
		echo "FAIL: $name"
		# shellcheck disable=SC2001 # every line, indented
		sed 's/^/    /' <<<"$out"
		FAILED=$((FAILED + 1))
	fi
	echo "#   (${SECONDS}s)"
}

# until SECONDS CMD: run CMD inside every half second until it succeeds.
until_ct() {
	local limit=$1 i
	for ((i = 0; i < limit * 2; i++)); do
		in_ct "$2" >/dev/null 2>&1 && return 0
		sleep 0.5
	done
	return 1
}
prop() { in_ct "systemctl show -p $1 --value mcpgw.service"; }
api() { in_ct "curl -s --max-time 10 http://127.0.0.1:7420$1"; }
journal_since() { in_ct "journalctl -q -o cat --no-pager -u mcpgw.service --since '$1'"; }
now_ct() { in_ct "date '+%Y-%m-%d %H:%M:%S'"; }
has_tools() {
	local tools t
	tools=$(api /v1/tools | tr ',' '\n' | sed -n 's/.*"name":"\([^"]*\)".*/\1/p')
	for t in "$@"; do
		grep -qx "$t" <<<"$tools" || { echo "tool $t not listed; /v1/tools names: ${tools//$'\n'/ }"; return 1; }
	done
}
# grep -q would end the pipe early: under pipefail, its writer's SIGPIPE fails it.
has() { grep "$@" >/dev/null; }
CONF=/etc/mcpgw/mcp.yaml

t_lintian() {
	command -v lintian >/dev/null || { echo "lintian is not installed (make deps)"; return 1; }
	lintian --fail-on error,warning "build/$DEB1" >"$RUN/lintian" 2>&1 && return 0
	echo "lintian exited $?:"
	grep -v 'running with root privileges' "$RUN/lintian"
	return 1
}

# dpkg -c against the list in docs/operations.md (*The Debian package*); a
# listed glob must match at least one file.
t_files() {
	local listed files f l ok rc=0
	listed=$(sed -n '/<!-- package files: begin -->/,/<!-- package files: end -->/p' docs/operations.md |
		grep '^/')
	[[ -n $listed ]] || { echo "no file list in docs/operations.md"; return 1; }
	files=$(dpkg-deb -c "build/$DEB1" | awk '$1 !~ /^d/ { print substr($6, 2) }')
	for f in $files; do
		ok=
		for l in $listed; do
			# shellcheck disable=SC2053 # a listed entry may be a glob
			[[ $f == $l ]] && ok=1
		done
		[[ -n $ok ]] || { echo "$f is in the package but not in docs/operations.md"; rc=1; }
	done
	for l in $listed; do
		ok=
		# shellcheck disable=SC2053 # a listed entry may be a glob
		for f in $files; do [[ $f == $l ]] && ok=1; done
		[[ -n $ok ]] || { echo "$l is in docs/operations.md but not in the package"; rc=1; }
	done
	return $rc
}

t_install() {
	# The cached tree holds apt's lists and the archives of the package's
	# dependencies (run.sh): apt resolves them as anywhere, from there.
	local out
	out=$(in_ct "apt-get install -y -q /root/$DEB1" 2>&1)
	local rc=$?
	((rc == 0)) || { echo "apt install ./$DEB1 exited $rc:"; tail -20 <<<"$out"; return 1; }
	has '^Get:[0-9]* [a-z]*://' <<<"$out" &&
		{ echo "apt downloaded what the cached tree should hold:"; grep '^Get:[0-9]* [a-z]*://' <<<"$out" | head; return 1; }
	local p
	for p in mcpgw procps libuv1 libjansson4 libyaml-0-2 nodejs npm libcurl4; do
		in_ct "dpkg-query -W -f '\${Status}' $p" | has 'install ok installed' ||
			{ echo "package $p is not installed after apt install"; return 1; }
	done
	in_ct "getent passwd mcpgw" | has ':/var/lib/mcpgw:' ||
		{ echo "no user mcpgw with HOME /var/lib/mcpgw: $(in_ct 'getent passwd mcpgw')"; return 1; }
}

t_running() {
	local enabled active sub status user
	enabled=$(in_ct "systemctl is-enabled mcpgw.service")
	active=$(prop ActiveState) sub=$(prop SubState) status=$(prop StatusText)
	[[ $enabled == enabled ]] || { echo "systemctl is-enabled: $enabled"; return 1; }
	[[ $active/$sub == active/running ]] ||
		{ echo "state $active/$sub; journal:"; in_ct "journalctl -u mcpgw -n 30 --no-pager"; return 1; }
	[[ $status == "serving 3 servers" ]] || { echo "StatusText '$status', not 'serving 3 servers'"; return 1; }
	# systemd logs "Started" for a Type=notify unit only once READY=1 came.
	in_ct "journalctl -q -o cat -u mcpgw --no-pager" | has '^Started mcpgw.service\|^Started MCP gateway' ||
		{ echo "no 'Started' line in the journal"; return 1; }
	user=$(in_ct "ps -o user= -p $(prop MainPID)")
	[[ $user == mcpgw ]] || { echo "the main process runs as '$user'"; return 1; }
}

t_servers() {
	local code
	code=$(in_ct "curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:7420/readyz")
	[[ $code == 200 ]] || { echo "/readyz answered $code"; return 1; }
	has_tools ev_echo ev_get-sum create_entities read_graph sequentialthinking ||
		{ echo "servers: $(api /v1/servers | head -c 2000)"; return 1; }
	local calls
	calls=$(in_ct "curl -s --max-time 30 http://127.0.0.1:7420/v1/tools/ev_echo/call \
		-H 'content-type: application/json' -d '{\"arguments\":{\"message\":\"from systemd\"}}'")
	grep -q 'from systemd' <<<"$calls" || { echo "ev_echo answered: $calls"; return 1; }
}

t_cgroups() {
	local cg main dirs d procs
	cg=$(prop ControlGroup) main=$(prop MainPID)
	[[ -n $cg ]] || { echo "no ControlGroup"; return 1; }
	in_ct "journalctl -q -o cat -u mcpgw --no-pager" | has 'each server instance runs in its own cgroup' ||
		{ echo "the daemon did not say it uses cgroups: $(in_ct "journalctl -q -o cat -u mcpgw --no-pager | grep -i cgroup")"; return 1; }
	dirs=$(in_ct "cd /sys/fs/cgroup$cg && ls -d mcpgw-$main-*" 2>/dev/null)
	[[ $(wc -w <<<"$dirs") -ge 3 ]] ||
		{ echo "cgroups under $cg: $(in_ct "ls /sys/fs/cgroup$cg") (expected mcpgw-$main-N for each instance)"; return 1; }
	for d in $dirs; do
		procs=$(in_ct "cat /sys/fs/cgroup$cg/$d/cgroup.procs")
		[[ -n $procs ]] || { echo "cgroup $d is empty"; return 1; }
	done
	# The daemon itself is not in an instance's cgroup.
	in_ct "cat /proc/$main/cgroup" | has "mcpgw-$main-" &&
		{ echo "the daemon is in an instance cgroup: $(in_ct "cat /proc/$main/cgroup")"; return 1; }
	return 0
}

t_reload() {
	local since status out
	in_ct "cp $CONF /root/good.yaml"
	# The daemon also reloads by itself when the file changes (inotify and
	# a poll, debounced): with a 10-minute debounce, what applies the edits
	# below within the test is systemctl reload alone.
	in_ct "sed -i 's/^gateway:\$/gateway:\\n  reload: {debounce_ms: 600000}/' $CONF"
	in_ct "systemctl reload mcpgw"
	sleep 1
	in_ct "cat >>$CONF <<'EOF'
  grandchild:
    command: node
    args: [/usr/local/lib/mcpgw-test/setsid-server.cjs]
EOF"
	sleep 1.5
	since=$(now_ct)
	if has_tools noop >/dev/null; then
		echo "the edit was applied before systemctl reload: the file watch's debounce did not hold"
		return 1
	fi
	in_ct "timeout 30 curl -sN http://127.0.0.1:7420/v1/events" >"$RUN/events" 2>/dev/null &
	local curl=$!
	sleep 0.5
	out=$(in_ct "systemctl reload mcpgw" 2>&1) || { echo "systemctl reload failed: $out"; kill "$curl"; return 1; }
	until_ct 20 "curl -s http://127.0.0.1:7420/v1/tools | grep -q '\"noop\"'" ||
		{ echo "the new server's tool noop is not listed: $(api /v1/servers | head -c 1500)"; kill "$curl"; return 1; }
	sleep 1
	kill "$curl" 2>/dev/null
	wait "$curl" 2>/dev/null
	status=$(prop StatusText)
	[[ $status == "serving 4 servers" ]] || { echo "StatusText '$status' after the reload"; return 1; }
	journal_since "$since" | has 'msg=reloading.*trigger=watch' &&
		{ echo "the file watch reloaded too: $(journal_since "$since" | grep msg=reloading)"; return 1; }
	journal_since "$since" | has 'msg=reloading.*trigger=sighup' ||
		{ echo "no 'reloading … trigger=sighup' in the journal: $(journal_since "$since" | grep -i reload)"; return 1; }
	journal_since "$since" | has '^Reloaded mcpgw.service\|^Reloaded MCP gateway' ||
		{ echo "systemd did not log the reload: $(journal_since "$since" | grep -i reload)"; return 1; }
	grep -q '^event: reload' "$RUN/events" ||
		{ echo "no reload event on /v1/events: $(grep '^event:' "$RUN/events" | sort | uniq -c)"; return 1; }
}

t_broken_reload() {
	local status since
	since=$(now_ct)
	in_ct "printf 'version: 1\nservers: [\n' >$CONF"
	in_ct "systemctl reload mcpgw" || { echo "systemctl reload failed"; return 1; }
	until_ct 10 "systemctl show -p StatusText --value mcpgw | grep -q refused"
	status=$(prop StatusText)
	[[ $status == "configuration refused; keeping the last known good one" ]] ||
		{ echo "StatusText '$status' after a broken edit"; return 1; }
	[[ $(prop ActiveState) == active ]] || { echo "the service is $(prop ActiveState)"; return 1; }
	has_tools ev_echo noop sequentialthinking || return 1
	api /v1/problems | has '"severity":"error"' ||
		{ echo "no error Problem: $(api /v1/problems | head -c 1000)"; return 1; }
}

# The test's server goes away with the last good configuration (before
# the test's edits) whatever the checks found, so later checks start clean.
t_setsid() {
	local rc
	setsid_checks
	rc=$?
	in_ct "cat /root/good.yaml >$CONF && systemctl reload mcpgw"
	return $rc
}
setsid_checks() {
	local cg pid cgpath
	cg=$(prop ControlGroup)
	pid=$(in_ct "pgrep -x -f 'sleep 617'")
	[[ -n $pid ]] || { echo "the server's setsid grandchild (sleep 617) is not running"; return 1; }
	# The host's cgroup v1 hierarchies show in /proc/PID/cgroup too: the
	# unified one is the 0:: line.
	cgpath=$(in_ct "grep '^0::' /proc/$pid/cgroup")
	[[ $cgpath == "0::$cg/mcpgw-"* ]] || { echo "the grandchild is in cgroup '$cgpath', not an instance's under $cg"; return 1; }
	# The reload stops the instance, and its grandchild with it.
	in_ct "cat /root/good.yaml >$CONF"
	in_ct "systemctl reload mcpgw"
	until_ct 20 "! pgrep -x -f 'sleep 617'" ||
		{ echo "sleep 617 (pid $pid) outlived its instance: $(in_ct "ps -o pid,sid,stat,args -p $pid; cat /proc/$pid/cgroup")"; return 1; }
	until_ct 10 "systemctl show -p StatusText --value mcpgw | grep -qx 'serving 3 servers'" ||
		{ echo "StatusText '$(prop StatusText)' after restoring the configuration"; return 1; }
}

# A sandboxed stdio server under the unit's hardening, as user mcpgw:
# bubblewrap needs user namespaces (no RestrictNamespaces= without user,
# no PrivateUsers=) and a /proc of its own. The server goes away again,
# whatever the checks found.
t_sandbox() {
	local rc
	in_ct "cp $CONF /root/before-sandbox.yaml"
	sandbox_checks
	rc=$?
	in_ct "cat /root/before-sandbox.yaml >$CONF && systemctl reload mcpgw"
	return $rc
}
sandbox_checks() {
	local servers out id user
	in_ct "cat >>$CONF <<'EOF'
  peek:
    command: node
    args: [/usr/local/lib/mcpgw-test/sandbox-server.cjs]
EOF"
	in_ct "systemctl reload mcpgw" || { echo "systemctl reload failed"; return 1; }
	until_ct 20 "curl -s http://127.0.0.1:7420/v1/tools | grep -q '\"peek\"'" ||
		{ echo "the sandboxed server's tool peek is not listed: $(api /v1/servers | head -c 2000)"; return 1; }
	# Each server's id and sandbox.enforced (with the reason when false).
	servers=$(in_ct "curl -s http://127.0.0.1:7420/v1/servers | node /usr/local/lib/mcpgw-test/sandbox-status.cjs")
	for id in peek everything memory thinking; do
		has -x "$id true" <<<"$servers" ||
			{ echo "server $id is not sandboxed (id enforced reason):"; echo "$servers"; return 1; }
	done
	user=$(in_ct "ps -o user= -C bwrap | sort -u")
	[[ $user == mcpgw ]] || { echo "bwrap processes run as '$user', not mcpgw"; return 1; }
	out=$(in_ct "curl -s --max-time 30 http://127.0.0.1:7420/v1/tools/peek/call \
		-H 'content-type: application/json' \
		-d '{\"dialog\":\"systemd-test\",\"arguments\":{\"paths\":[\"/etc/os-release\",\"$CONF\",\"/var/lib/mcpgw\",\"/etc/shadow\"]}}'")
	has '/etc/os-release: readable' <<<"$out" ||
		{ echo "the server could not read /etc/os-release (the base system): $out"; return 1; }
	has "$CONF: readable" <<<"$out" && { echo "the sandboxed server read the config: $out"; return 1; }
	has "$CONF: E" <<<"$out" || { echo "no answer about $CONF: $out"; return 1; }
	has '/var/lib/mcpgw: readable\|/etc/shadow: readable' <<<"$out" &&
		{ echo "the sandboxed server read the state directory or /etc/shadow: $out"; return 1; }
	return 0
}

# A network list under the unit (ProtectProc=invisible, the hardening's
# namespaces and system call filter): the instance's relay is known to the
# proxy by its pidfd and place as bubblewrap's child, and an allowed CONNECT
# hands the connected socket to it; the gateway's own address stays refused.
t_sandbox_network() {
	local rc pid
	pid=$(in_ct "setsid node -e \"require('http').createServer((q, r) => r.end('hi')).listen(7499, '127.0.0.1')\" \
		</dev/null >/dev/null 2>&1 & echo \$!")
	in_ct "cp $CONF /root/before-sandbox.yaml"
	sandbox_network_checks
	rc=$?
	in_ct "kill $pid; cat /root/before-sandbox.yaml >$CONF && systemctl reload mcpgw"
	return $rc
}
call_peeknet() {
	in_ct "curl -s --max-time 30 http://127.0.0.1:7420/v1/tools/peeknet/call \
		-H 'content-type: application/json' -d '{\"dialog\":\"systemd-net\",\"arguments\":{\"connect\":\"$1\"}}'"
}
sandbox_network_checks() {
	local out
	in_ct "cat >>$CONF <<'EOF'
  peeknet:
    command: node
    args: [/usr/local/lib/mcpgw-test/sandbox-server.cjs]
    transform: [{suffix: net}]
    sandbox: {network: ['127.0.0.1:7499']}
EOF"
	in_ct "systemctl reload mcpgw" || { echo "systemctl reload failed"; return 1; }
	until_ct 20 "curl -s http://127.0.0.1:7420/v1/tools | grep -q '\"peeknet\"'" ||
		{ echo "the tool peeknet is not listed: $(api /v1/servers | head -c 2000)"; return 1; }
	out=$(call_peeknet 127.0.0.1:7499)
	has 'connect: HTTP/1.1 200' <<<"$out" ||
		{ echo "the allowed destination was not reached through the proxy: $out"; echo "$(journal_since '-2min' | grep -i 'proxy\|sandbox' | tail -5)"; return 1; }
	out=$(call_peeknet 127.0.0.1:7420)
	has 'connect: refused: HTTP/1.1 403' <<<"$out" ||
		{ echo "the gateway's own address was not refused: $out"; return 1; }
}

t_watchdog() {
	local pid n0 since
	pid=$(prop MainPID) n0=$(prop NRestarts) since=$(now_ct)
	# SIGSTOP stands for a stuck loop: no WATCHDOG=1 any more.
	in_ct "kill -STOP $pid"
	until_ct 75 "[ \"\$(systemctl show -p MainPID --value mcpgw)\" != $pid ] &&
		[ \"\$(systemctl show -p SubState --value mcpgw)\" = running ]" ||
		{ echo "after 75 s: MainPID $(prop MainPID) state $(prop ActiveState)/$(prop SubState); $(journal_since "$since" | grep -v msg=http | tail -5)"
		  in_ct "kill -CONT $pid"; return 1; }
	journal_since "$since" | has 'Watchdog timeout' ||
		{ echo "no 'Watchdog timeout' in the journal: $(journal_since "$since" | head -10)"; return 1; }
	[[ $(prop NRestarts) -gt $n0 ]] || { echo "NRestarts stayed $n0"; return 1; }
	until_ct 60 "curl -sf http://127.0.0.1:7420/readyz" || { echo "not ready after the restart"; return 1; }
}

t_stop() {
	local cg out
	cg=$(prop ControlGroup)
	# A 4-second call in flight when the stop comes: it must complete.
	in_ct "curl -s --max-time 30 http://127.0.0.1:7420/v1/tools/ev_trigger-long-running-operation/call \
		-H 'content-type: application/json' -d '{\"arguments\":{\"duration\":4,\"steps\":2}}'" \
		>"$RUN/call" 2>&1 &
	local curl=$!
	sleep 1.5
	out=$(in_ct "systemctl stop mcpgw" 2>&1) || { echo "systemctl stop failed: $out"; return 1; }
	wait "$curl"
	grep -q 'Long running operation completed' "$RUN/call" ||
		{ echo "the in-flight call answered: $(head -c 500 "$RUN/call")"; return 1; }
	[[ $(prop ActiveState) == inactive ]] || { echo "state $(prop ActiveState) after stop"; return 1; }
	out=$(in_ct "pgrep -a -u mcpgw")
	[[ -z $out ]] || { echo "processes of mcpgw left: $out"; return 1; }
	out=$(in_ct "cat /sys/fs/cgroup$cg/cgroup.procs 2>/dev/null")
	[[ -z $out ]] || { echo "pids left in $cg: $out"; return 1; }
	in_ct "systemctl start mcpgw" || { echo "systemctl start after the stop failed"; return 1; }
}

t_upgrade() {
	local id0 pid0 got out
	in_ct "sed -i 's/^  listen: 127.0.0.1:7420$/  listen: 127.0.0.1:7420   # edited by the operator/' $CONF"
	in_ct "grep -q 'edited by the operator' $CONF" || { echo "the test could not edit $CONF"; return 1; }
	id0=$(prop InvocationID) pid0=$(prop MainPID)
	out=$(in_ct "apt-get install -y -q /root/$DEB2" 2>&1) ||
		{ echo "apt install ./$DEB2 failed:"; tail -20 <<<"$out"; return 1; }
	got=$(in_ct "dpkg-query -W -f '\${Version}' mcpgw")
	[[ $got == "$VERSION+upgrade" ]] || { echo "mcpgw $got installed, not $VERSION+upgrade"; return 1; }
	in_ct "grep -q 'edited by the operator' $CONF" ||
		{ echo "the edited $CONF was replaced: $(in_ct "head -15 $CONF")"; return 1; }
	[[ $(prop InvocationID) != "$id0" && $(prop MainPID) != "$pid0" ]] ||
		{ echo "the service was not restarted (MainPID $pid0 still)"; return 1; }
	[[ $(prop SubState) == running ]] || { echo "state $(prop ActiveState)/$(prop SubState) after the upgrade"; return 1; }
}

t_purge() {
	local out left
	out=$(in_ct "apt-get purge -y -q mcpgw" 2>&1) || { echo "apt purge failed:"; tail -20 <<<"$out"; return 1; }
	out=$(in_ct "pgrep -a -u mcpgw")
	[[ -z $out ]] || { echo "processes of mcpgw left: $out"; return 1; }
	out=$(in_ct "systemctl list-unit-files --no-legend mcpgw.service")
	[[ -z $out ]] || { echo "the unit is still known: $out"; return 1; }
	[[ $(prop LoadState) == not-found ]] || { echo "LoadState $(prop LoadState)"; return 1; }
	left=$(in_ct "ls -d /var/lib/mcpgw /var/cache/mcpgw /etc/mcpgw /run/mcpgw \
		/etc/systemd/system/multi-user.target.wants/mcpgw.service 2>/dev/null")
	[[ -z $left ]] || { echo "left after purge: $left"; return 1; }
	# Where a service under ProtectSystem=strict could have written.
	left=$(in_ct "find /etc /var /tmp /run /srv /opt /home /root -user mcpgw 2>/dev/null")
	[[ -z $left ]] || { echo "files of user mcpgw left: $left"; return 1; }
}

check "lintian reports no error and no warning" t_lintian
check "dpkg -c lists exactly the files of docs/operations.md" t_files
check "apt install ./$DEB1 pulls its dependencies and creates the user" t_install
check "the service is enabled and active (running) after READY=1, as user mcpgw" t_running
check "the example servers started with npx and their tools are listed" t_servers
check "each server instance has its cgroup under the service's" t_cgroups
check "systemctl reload applies a config edit (reload event, StatusText, journal)" t_reload
check "a broken edit keeps the last good config" t_broken_reload
check "a server's setsid grandchild ignoring SIGTERM is killed with its instance" t_setsid
check "a sandboxed stdio server runs under the unit as mcpgw and cannot read the config" t_sandbox
check "a sandboxed server's network list works under the unit: an allowed CONNECT, the gateway refused" t_sandbox_network
check "a stopped loop is killed by the watchdog and systemd restarts the service" t_watchdog
check "systemctl stop finishes an in-flight call and leaves no process behind" t_stop
check "apt install of a second build keeps the edited mcp.yaml and restarts the service" t_upgrade
check "apt purge removes the service, its user's state and directories" t_purge

echo "# total ${SECONDS}s"
echo "$PASSED passed, $FAILED failed"
((FAILED == 0))
