// The public surface of every subpath of the package, written to .ci/merchant-webhooks.api.md: each
// export with its kind and type, each interface and class with its members, as the compiler sees them
// from the sources that package.json's exports build. `node .ci/api-report.mjs` writes the file;
// `--check` exits 1 with a diff-like summary when the file is not what the sources give, which
// test/api-report.test.ts (and so CI) runs: a change to the public surface is seen in review.
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const REPORT = ".ci/merchant-webhooks.api.md";

/** Each code subpath of package.json's exports, with the source file tsconfig.json maps it to. */
function entryPoints() {
  const manifest = JSON.parse(readFileSync(`${ROOT}package.json`, "utf8"));
  const config = ts.readConfigFile(`${ROOT}tsconfig.json`, ts.sys.readFile).config;
  const paths = config.compilerOptions.paths;
  return Object.keys(manifest.exports)
    .filter((subpath) => typeof manifest.exports[subpath] === "object")
    .map((subpath) => {
      const name = subpath === "." ? "merchant-webhooks" : `merchant-webhooks/${subpath.slice(2)}`;
      const mapped = paths[name]?.[0];
      if (!mapped) throw new Error(`${name}: no path in tsconfig.json`);
      return { name, file: `${ROOT}${mapped.replace(/^\.\//, "")}` };
    });
}

/** Type text as the source writes it (names kept, comments and line breaks dropped). */
const written = (node) =>
  node
    .getText()
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/\/\/[^\n]*/g, "")
    .replace(/\s+/g, " ")
    .replace(/([([{<]) /g, "$1")
    .replace(/ ([)\]}>])/g, "$1")
    .trim();

/** The report, and each name that two subpaths export as different things (it should mean one thing). */
export function apiSurface() {
  const entries = entryPoints();
  const config = ts.readConfigFile(`${ROOT}tsconfig.json`, ts.sys.readFile).config;
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, ROOT);
  const program = ts.createProgram(
    entries.map((entry) => entry.file),
    { ...options, noEmit: true },
  );
  const checker = program.getTypeChecker();
  // Inferred types (a zod schema's) are cut short by the compiler's own limit: their name and shape's start.
  const inferred = (type) => checker.typeToString(type);
  const typeOf = (symbol, at) => {
    const declaration = symbol.valueDeclaration ?? symbol.declarations?.[0];
    if (declaration && "type" in declaration && declaration.type) return written(declaration.type);
    return inferred(checker.getTypeOfSymbolAtLocation(symbol, at));
  };
  const signature = (declaration) => {
    const generics = declaration.typeParameters ? `<${declaration.typeParameters.map(written).join(", ")}>` : "";
    const parameters = declaration.parameters.map(written).join(", ");
    const returns = declaration.type
      ? written(declaration.type)
      : inferred(checker.getReturnTypeOfSignature(checker.getSignatureFromDeclaration(declaration)));
    return `${generics}(${parameters}): ${returns}`;
  };
  const members = (type, at) =>
    checker
      .getPropertiesOfType(type)
      .filter((property) => !property.name.startsWith("__") && !property.name.startsWith("#"))
      .filter((property) => {
        const declaration = property.valueDeclaration ?? property.declarations?.[0];
        const modifiers = declaration ? ts.getCombinedModifierFlags(declaration) : 0;
        return !(modifiers & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected));
      })
      .map((property) => {
        const declaration = property.valueDeclaration ?? property.declarations?.[0];
        const optional = property.flags & ts.SymbolFlags.Optional ? "?" : "";
        if (declaration && (ts.isMethodSignature(declaration) || ts.isMethodDeclaration(declaration)))
          return `  ${property.name}${optional}${signature(declaration)};`;
        return `  ${property.name}${optional}: ${typeOf(property, at)};`;
      });
  const out = [
    "# The public surface of merchant-webhooks",
    "",
    "Written by `node .ci/api-report.mjs` from the sources; `test/api-report.test.ts` fails when it differs",
    "from them. A change here is a change to what users import: review it as such.",
  ];
  const meanings = new Map();
  for (const entry of entries) {
    const source = program.getSourceFile(entry.file);
    const module = checker.getSymbolAtLocation(source);
    out.push("", `## ${entry.name}`, "", "```ts");
    const exports = checker.getExportsOfModule(module).sort((a, b) => a.name.localeCompare(b.name));
    for (const exported of exports) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const at = symbol.declarations?.[0] ?? source;
      const name = exported.name;
      meanings.set(name, new Map([...(meanings.get(name) ?? []), [symbol, entry.name]]));
      if (symbol.flags & ts.SymbolFlags.Class) {
        const declaration = symbol.declarations.find(ts.isClassDeclaration);
        const heritage = declaration?.heritageClauses ? ` ${declaration.heritageClauses.map(written).join(" ")}` : "";
        const constructors = declaration?.members.filter(ts.isConstructorDeclaration) ?? [];
        out.push(
          `class ${name}${heritage} {`,
          ...constructors.map((c) => `  constructor${signature(c).replace(/: [^:]*$/, "")};`),
          ...members(checker.getDeclaredTypeOfSymbol(symbol), at),
          "}",
        );
        continue;
      }
      if (symbol.flags & ts.SymbolFlags.Interface) {
        const declaration = symbol.declarations.find(ts.isInterfaceDeclaration);
        const generics = declaration?.typeParameters ? `<${declaration.typeParameters.map(written).join(", ")}>` : "";
        const calls = (declaration?.members ?? [])
          .filter(ts.isCallSignatureDeclaration)
          .map((c) => `  ${signature(c)};`);
        out.push(
          `interface ${name}${generics} {`,
          ...calls,
          ...members(checker.getDeclaredTypeOfSymbol(symbol), at),
          "}",
        );
      } else if (symbol.flags & ts.SymbolFlags.TypeAlias) {
        const declaration = symbol.declarations.find(ts.isTypeAliasDeclaration);
        const generics = declaration?.typeParameters ? `<${declaration.typeParameters.map(written).join(", ")}>` : "";
        out.push(`type ${name}${generics} = ${written(declaration.type)};`);
      }
      if (symbol.flags & ts.SymbolFlags.Function) {
        for (const declaration of symbol.declarations.filter(ts.isFunctionDeclaration)) {
          // An overloaded function: the overloads are its surface, not the implementation.
          if (!declaration.body || symbol.declarations.filter(ts.isFunctionDeclaration).length === 1)
            out.push(`function ${name}${signature(declaration)};`);
        }
      } else if (symbol.flags & ts.SymbolFlags.Variable) {
        out.push(`const ${name}: ${typeOf(symbol, at)};`);
      }
    }
    out.push("```");
  }
  const collisions = [...meanings]
    .filter(([, symbols]) => symbols.size > 1)
    .map(([name, symbols]) => `${name}: ${[...symbols.values()].join(", ")}`);
  return { report: `${out.join("\n")}\n`, collisions };
}

export const apiReport = () => apiSurface().report;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const report = apiReport();
  if (process.argv.includes("--check")) {
    const current = readFileSync(`${ROOT}${REPORT}`, "utf8");
    if (current !== report) {
      const had = new Set(current.split("\n"));
      const has = new Set(report.split("\n"));
      for (const line of current.split("\n")) if (!has.has(line)) console.log(`- ${line}`);
      for (const line of report.split("\n")) if (!had.has(line)) console.log(`+ ${line}`);
      console.log(`${REPORT} is not the surface the sources give: run node .ci/api-report.mjs and review the change`);
      process.exit(1);
    }
    console.log(`${REPORT}: up to date`);
  } else {
    writeFileSync(`${ROOT}${REPORT}`, report);
    console.log(`wrote ${REPORT}`);
  }
}
