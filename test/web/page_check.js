// Shared by the plain and bundled example pages: round-trips a commit through the library and
// reports the outcome in the page (document.body.dataset.status is read by the test driver).
export function check(decodeCommit, encodeCommit) {
  const out = document.getElementById("out");
  try {
    const commit = {
      session: "page",
      seq: 1,
      key: "k",
      hlc: 1,
      parents: [],
      schema: "note@1",
      kind: "value",
      value: { text: "hello from the browser" },
    };
    const back = decodeCommit(encodeCommit(commit));
    if (back.value.text !== commit.value.text) {
      throw new Error("round trip changed the value");
    }
    out.textContent = `ok: ${back.value.text}`;
    document.body.dataset.status = "ok";
  } catch (err) {
    out.textContent = `failed: ${err.stack ?? err}`;
    document.body.dataset.status = "failed";
  }
}
