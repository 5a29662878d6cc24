package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The real-browser harness in Firefox: Debian's firefox-esr, a stock
// Firefox that playwright cannot drive (it needs its own patched build),
// driven over WebDriver BiDi by npm's puppeteer-core, which downloads
// nothing. A script imports "./firefox.mjs" instead of "./browser.mjs";
// everything else — the run's directory, its bound, its tag and the proof
// that no process outlives it — is the chromium harness's (browser.exec).

// firefoxPath is Debian's firefox-esr.
const firefoxPath = "/usr/bin/firefox-esr"

// needFirefox skips a test when node, puppeteer-core in the browser
// modules, or firefox-esr is absent, naming which and how CI gets it.
func needFirefox(t *testing.T) *browser {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("needs node (Debian: nodejs; .ci/run installs it)")
	}
	modules := os.Getenv("POLYREPL_TEST_BROWSER_MODULES")
	if modules == "" {
		t.Skip("needs npm's puppeteer-core: set POLYREPL_TEST_BROWSER_MODULES to a node_modules holding it (.ci/run does: npm install puppeteer-core)")
	}
	if _, err := os.Stat(filepath.Join(modules, "puppeteer-core", "package.json")); err != nil {
		t.Skipf("$POLYREPL_TEST_BROWSER_MODULES (%s) lacks puppeteer-core (npm install puppeteer-core)", modules)
	}
	if _, err := os.Stat(firefoxPath); err != nil {
		t.Skipf("needs Debian's firefox-esr at %s (apt-get install firefox-esr; .ci/run installs it)", firefoxPath)
	}
	return &browser{node: node, modules: modules, chromium: chromiumPath}
}

// firefoxRun is r with the Firefox helper beside its script.
func firefoxRun(r browserRun) browserRun {
	files := map[string]string{"firefox.mjs": firefoxModule}
	for name, text := range r.files {
		files[name] = text
	}
	r.files = files
	r.env = append([]string{"POLYREPL_TEST_FIREFOX=" + firefoxPath}, r.env...)
	return r
}

// firefoxModule is the helper a Firefox script imports.
const firefoxModule = `// Written by e2e/browser_firefox_test.go for one run.
import puppeteer from "puppeteer-core";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const input = JSON.parse(readFileSync(new URL("./input.json", import.meta.url), "utf8"));

// Firefox runs as whoever runs the test (root in CI): it gets a HOME of
// its own, gone when the script ends; puppeteer makes its profile in a
// temporary directory and removes it on close.
const home = mkdtempSync(join(tmpdir(), "polyrepl-firefox-home-"));
process.on("exit", () => rmSync(home, { recursive: true, force: true }));

// Nothing Firefox does on its own may reach the network: no updates, no
// telemetry or health report, no captive-portal or connectivity probe,
// no remote settings, safe browsing or sync; and every request to a
// host other than localhost goes to a proxy on a closed port, so what a
// pref forgot fails instead of leaving the machine.
const offline = {
  "app.update.enabled": false,
  "app.update.auto": false,
  "app.update.disabledForTesting": true,
  "app.normandy.enabled": false,
  "app.shield.optoutstudies.enabled": false,
  "toolkit.telemetry.enabled": false,
  "toolkit.telemetry.unified": false,
  "toolkit.telemetry.server": "",
  "datareporting.healthreport.uploadEnabled": false,
  "datareporting.policy.dataSubmissionEnabled": false,
  "network.captive-portal-service.enabled": false,
  "network.connectivity-service.enabled": false,
  "services.settings.server": "data:,#remote-settings-off/v1",
  "browser.safebrowsing.malware.enabled": false,
  "browser.safebrowsing.phishing.enabled": false,
  "browser.safebrowsing.downloads.enabled": false,
  "browser.safebrowsing.update.enabled": false,
  "extensions.update.enabled": false,
  "extensions.getAddons.cache.enabled": false,
  "identity.fxaccounts.enabled": false,
  "network.dns.disablePrefetch": true,
  "network.prefetch-next": false,
  "network.proxy.type": 1,
  "network.proxy.http": "127.0.0.1",
  "network.proxy.http_port": 9,
  "network.proxy.ssl": "127.0.0.1",
  "network.proxy.ssl_port": 9,
  "network.proxy.no_proxies_on": "",
  "network.proxy.allow_hijacking_localhost": false,
};

// launch starts Debian's firefox-esr headless over WebDriver BiDi.
export function launch(options = {}) {
  return puppeteer.launch({
    browser: "firefox",
    executablePath: process.env.POLYREPL_TEST_FIREFOX,
    headless: true,
    env: { ...process.env, HOME: home },
    extraPrefsFirefox: offline,
    protocolTimeout: 120000,
    ...options,
  });
}

// result prints the run's reply, the one line the test decodes.
export function result(value) {
  process.stdout.write("\n" + JSON.stringify(value) + "\n");
}
`
