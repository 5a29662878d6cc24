package e2e

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The page `polyrepl view` serves, in Firefox (Debian's firefox-esr
// through puppeteer-core over WebDriver BiDi): the person's core path of
// TestViewPage, so the page is known to work in both current engines.

// viewFirefoxScript drives one page in Firefox; each step's outcome goes
// into the reply (as viewPageScript's do). input: url (with its token),
// name (the session).
const viewFirefoxScript = `import { launch, input, result } from "./firefox.mjs";

const out = { steps: {} };
async function step(name, fn) {
  try { out.steps[name] = { ok: true, got: await fn() }; }
  catch (e) { out.steps[name] = { ok: false, error: String(e && e.stack || e) }; }
}

const browser = await launch();
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  const wait = { timeout: 30000, polling: 200 };
  // cell finds the last cell entry holding text (and, if given, with a
  // status), and returns what the person sees of it.
  const cell = (text, status) => page.waitForFunction((text, status) => {
    const all = [...document.querySelectorAll("#record .entry[data-kind=cell]")]
      .filter((n) => (!status || n.dataset.status === status) && (n.querySelector(".output") || {}).textContent?.includes(text));
    const n = all[all.length - 1];
    return n && { status: n.dataset.status, who: (n.querySelector(".who") || {}).textContent || "" };
  }, wait, text, status).then((h) => h.jsonValue());

  await step("load", async () => {
    await page.goto(input.url);
    await page.waitForSelector("[data-session='" + input.name + "']", { timeout: 30000 });
    return { url: page.url(), title: await page.title(), userAgent: await page.evaluate(() => navigator.userAgent),
      session: await page.$eval("[data-session='" + input.name + "']", (n) => n.textContent) };
  });

  await step("live", async () => {
    // The CLI's cell was started before the page opened and prints for
    // minutes: its output shows while it still runs.
    return await cell("epoch", "running");
  });

  await step("figure", async () => {
    const h = await page.waitForFunction(() => {
      const i = document.querySelector("img.figure");
      return i && i.complete && i.naturalWidth > 0 && { naturalWidth: i.naturalWidth, mime: i.dataset.mime };
    }, wait);
    return await h.jsonValue();
  });

  await step("interrupt", async () => {
    await page.click("button[data-action=interrupt]");
    return await cell("epoch", "interrupted");
  });

  await step("typed", async () => {
    await page.click("#code");
    await page.keyboard.type("print('from firefox', 6 * 7)");
    await page.keyboard.down("Shift");
    await page.keyboard.press("Enter");
    await page.keyboard.up("Shift");
    const c = await cell("from firefox 42");
    return { ...c, editor: await page.$eval("#code", (n) => n.value) };
  });

  out.errors = errors;
} finally {
  result(out);
  await browser.close();
}
`

// TestViewPageFirefox: in Firefox, the page loads with its token and
// lists the session; a cell run from the CLI shows while it runs; a
// matplotlib figure shows as an image that decoded; interrupt from the
// page stops the running cell; a cell typed into the editor and sent with
// Shift-Enter runs and is recorded as the person's through the view. No
// firefox process outlives the run (browser.exec proves it).
func TestViewPageFirefox(t *testing.T) {
	needPython(t)
	b := needFirefox(t)
	if err := exec.Command(python, "-c", "import matplotlib").Run(); err != nil {
		t.Skipf("%s has no matplotlib (Debian: python3-matplotlib)", python)
	}
	t.Parallel()
	e := newEnv(t)
	e.setenv("POLYREPL_LABEL", "alice")
	const name = "viewfx"
	e.must(0, "exec", name, "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()")
	e.must(124, "exec", name, ticking, "--timeout", "0")
	v := e.startView(name)
	var got viewSteps
	start := time.Now()
	b.run(t, firefoxRun(browserRun{
		script: viewFirefoxScript,
		input:  map[string]any{"url": v.url, "name": name},
		bound:  4 * time.Minute,
	}), &got)
	t.Logf("the Firefox run took %s", time.Since(start).Round(time.Second))

	var load struct{ URL, Title, Session, UserAgent string }
	if got.step(t, "load", &load) {
		if !strings.Contains(load.UserAgent, "Firefox/") {
			t.Errorf("the page ran in %q: want Firefox", load.UserAgent)
		}
		if strings.Contains(load.URL, "token=") {
			t.Errorf("the token stayed in the address bar: %s", load.URL)
		}
		if !strings.Contains(load.Session, name) {
			t.Errorf("the session list shows %q: want %s", load.Session, name)
		}
	}
	var live struct{ Status, Who string }
	if got.step(t, "live", &live) && (live.Status != "running" || !strings.Contains(live.Who, "alice via cli")) {
		t.Errorf("the CLI's cell showed as %+v: want running, by alice via cli", live)
	}
	var fig struct {
		NaturalWidth int
		Mime         string
	}
	if got.step(t, "figure", &fig) && (fig.NaturalWidth == 0 || fig.Mime != "image/png") {
		t.Errorf("the figure showed as %+v: want a PNG that decoded", fig)
	}
	var intr struct{ Status string }
	if got.step(t, "interrupt", &intr) && intr.Status != "interrupted" {
		t.Errorf("the interrupted cell showed as %+v", intr)
	}
	var typed struct{ Status, Who, Editor string }
	if got.step(t, "typed", &typed) && (typed.Who != "alice via view" || typed.Editor != "") {
		t.Errorf("the page's cell showed as %+v: want by alice via view, and the editor emptied", typed)
	}
	if len(got.Errors) > 0 {
		t.Errorf("the page's script failed in Firefox:\n%s", strings.Join(got.Errors, "\n"))
	}

	// The record holds the page's cell as alice's through the view.
	hist, _ := e.must(0, "history", name, "--json")
	if !strings.Contains(hist, "from firefox") || !strings.Contains(hist, `"how":"view"`) || !strings.Contains(hist, `"who":"alice"`) {
		t.Errorf("history does not show the page's cell as alice via view:\n%s", clip(hist))
	}
	v.stop()
}
