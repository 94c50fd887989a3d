// Checks every workflow under .github/workflows against GitHub's own workflow schema, offline: the
// parser of GitHub's Actions language services (@actions/workflow-parser) reads each file, checks
// keys, value types, expressions and cron lines, and reports what GitHub would refuse to run. Exits 1
// with one line per error; .ci/run runs it as a step, under tsx: the parser imports its schema as JSON
// without an import attribute, which Node refuses and tsx allows.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { convertWorkflowTemplate, NoOperationTraceWriter, parseWorkflow } from "@actions/workflow-parser";

const dir = process.argv[2] ?? ".github/workflows";
const files = readdirSync(dir).filter((name) => /\.ya?ml$/.test(name));
let errors = 0;
for (const name of files) {
  const path = join(dir, name);
  const parsed = parseWorkflow({ name: path, content: readFileSync(path, "utf8") }, new NoOperationTraceWriter());
  if (parsed.value) await convertWorkflowTemplate(parsed.context, parsed.value);
  for (const error of parsed.context.errors.getErrors()) {
    errors++;
    console.log(error.message);
  }
}
if (files.length === 0) {
  console.log(`no workflow in ${dir}`);
  process.exit(1);
}
console.log(`${files.length} workflows checked: ${errors} errors`);
process.exit(errors > 0 ? 1 : 0);
