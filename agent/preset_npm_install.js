// Installs an agent preset's pinned npm packages into an agent image at
// build time. It runs as the build sandbox's entrypoint: network none, the
// egress proxy's unix socket mounted at /run/testfirst/egress.sock, which
// this script relays to 127.0.0.1:3128 for npm.
//
// argv[2] is a JSON plan: {"tarballs": [{"spec", "integrity", "arch"}],
// "omit_optional": bool, "check": [argv]}. Every tarball (but those for
// another process.arch) is fetched with `npm pack` and refused unless its
// sha512 is the pinned integrity; then the first is installed globally
// from npm's cache, offline, so nothing the pin does not cover is fetched,
// and `check` proves the CLI starts. The script and the build's certificates are removed before the
// image is committed.
'use strict';
const net = require('net');
const fs = require('fs');
const crypto = require('crypto');
const { spawn, spawnSync } = require('child_process');

const socket = '/run/testfirst/egress.sock';
const proxy = 'http://127.0.0.1:3128';
const ca = '/opt/testfirst/build-ca.pem';
const plan = JSON.parse(process.argv[2]);

function fail(msg) {
  console.error('agent image: ' + msg);
  process.exit(1);
}

const env = Object.assign({}, process.env, {
  HOME: '/tmp',
  npm_config_cache: '/tmp/npm-cache',
  npm_config_update_notifier: 'false',
  npm_config_fund: 'false',
  npm_config_audit: 'false',
  npm_config_proxy: proxy,
  npm_config_https_proxy: proxy,
});
if (fs.existsSync(ca)) env.npm_config_cafile = ca;

function npm(args, offline) {
  const r = spawnSync('npm', args.concat(offline ? ['--offline'] : []), { env, cwd: '/tmp', encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (r.status !== 0) fail('npm ' + args.join(' ') + ' exited with ' + r.status + (r.error ? ': ' + r.error.message : ''));
  return r.stdout;
}

function serveRelay() {
  const relay = net.createServer((c) => {
    const up = net.connect(socket);
    up.on('error', () => c.destroy());
    c.on('error', () => up.destroy());
    c.pipe(up);
    up.pipe(c);
  });
  relay.on('error', (err) => fail('relay on 127.0.0.1:3128: ' + err.message));
  relay.listen(3128, '127.0.0.1', () => {
    // npm runs in a child of a second node, as spawnSync would block the
    // event loop that serves the relay.
    const child = spawn(process.execPath, [__filename, process.argv[2]], {
      env: Object.assign({}, process.env, { TESTFIRST_INSTALL_CHILD: '1' }),
      stdio: 'inherit',
    });
    child.on('exit', (code) => process.exit(code === null ? 1 : code));
  });
}

function install() {
  let first = '';
  for (const t of plan.tarballs) {
    if (t.arch && t.arch !== process.arch) continue;
    const out = JSON.parse(npm(['pack', '--json', t.spec], false));
    const file = '/tmp/' + out[0].filename;
    const sum = 'sha512-' + crypto.createHash('sha512').update(fs.readFileSync(file)).digest('base64');
    if (sum !== t.integrity) fail(t.spec + ': the registry served a tarball whose integrity is ' + sum + ', not the pinned ' + t.integrity);
    console.error('agent image: ' + t.spec + ' matches its pinned integrity');
    if (!first) first = file;
  }
  const args = ['install', '--global', '--prefix', '/usr/local', '--no-save', first];
  if (plan.omit_optional) args.push('--omit=optional');
  npm(args, true);
  const check = spawnSync(plan.check[0], plan.check.slice(1), { env: { PATH: process.env.PATH, HOME: '/tmp' }, encoding: 'utf8' });
  if (check.status !== 0) fail(plan.check.join(' ') + ' exited with ' + check.status + ': ' + (check.stderr || '') + (check.error ? check.error.message : ''));
  console.log(check.stdout.trim());
  // The image keeps the CLI only: not the build's authority, not this
  // script.
  fs.rmSync(ca, { force: true });
  fs.rmSync(__filename, { force: true });
  process.exit(0);
}

if (process.env.TESTFIRST_INSTALL_CHILD === '1') install();
else serveRelay();
