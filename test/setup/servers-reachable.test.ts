import { describe, expect, it } from "vitest";
import { DATABASE_URL } from "../support/postgres.js";
import { missingServers } from "./servers-reachable.js";

const withDatabase = (name: string) => {
  const url = new URL(DATABASE_URL);
  url.pathname = `/${name}`;
  return url.toString();
};

describe("the suite's pre-check", () => {
  it("passes when Redis and the database in DATABASE_URL answer", async () => {
    expect(await missingServers({ ...process.env, DATABASE_URL })).toEqual([]);
  });

  it("names a database that does not exist in one line, with the command that creates it", async () => {
    const name = `mw_absent_${process.pid}`;
    const lines = await missingServers({ ...process.env, DATABASE_URL: withDatabase(name) });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(
        `^PostgreSQL at [^ ]+ has no database "${name}" \\(DATABASE_URL\\); create it with: createdb .* ${name}$`,
      ),
    );
  });
});
