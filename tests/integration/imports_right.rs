//! Imports that vanished or broke a file (issue 53 items 3 and 8): a name used only
//! as a member is unused, a Python string annotation uses its names, a removed or
//! deleted import leaves no blank line out of place, a name merged into a multi-line
//! import gets a line of its own.

use crate::util::TestRepo;

fn blob_at(repo: &TestRepo, id: &str, path: &str) -> String {
    repo.git(&["cat-file", "blob", &format!("refs/astedit/{id}:{path}")])
}

/// Stages `edit ARGS` in `repo` and returns the preview id.
fn stage(repo: &TestRepo, args: &[&str]) -> String {
    let mut all = vec!["edit"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = repo.run(&all);
    out.assert_code(0);
    out.json()["id"].as_str().expect("an id").to_string()
}

#[test]
fn remove_import_fires_once_only_a_member_has_the_name() {
    let repo = TestRepo::new();
    repo.write(
        "a.ts",
        "import { isArray, isString } from \"@vue/shared\";\n\n\
         export const f = (x: unknown) => isArray(x) || isString(x);\n",
    );
    repo.commit_all("init");
    let id = stage(
        &repo,
        &[
            "-p",
            "isArray($X)",
            "-r",
            "Array.isArray($X)",
            "--remove-import",
            "isArray",
        ],
    );
    assert_eq!(
        blob_at(&repo, &id, "a.ts"),
        "import { isString } from \"@vue/shared\";\n\n\
         export const f = (x: unknown) => Array.isArray(x) || isString(x);\n"
    );
}

#[test]
fn remove_import_keeps_a_name_a_string_annotation_uses() {
    let repo = TestRepo::new();
    repo.write(
        "users.py",
        "from typing import Dict, List\n\nfrom .models import User\n\n\n\
         def all_users() -> \"List[User]\":\n    return Dict()\n",
    );
    repo.commit_all("init");
    let id = stage(
        &repo,
        &[
            "-p",
            "Dict()",
            "-r",
            "[]",
            "--remove-import",
            "Dict",
            "--remove-import",
            "List",
            "--remove-import",
            "User",
        ],
    );
    assert_eq!(
        blob_at(&repo, &id, "users.py"),
        "from typing import List\n\nfrom .models import User\n\n\n\
         def all_users() -> \"List[User]\":\n    return []\n"
    );
}

#[test]
fn a_file_s_only_import_goes_without_a_leading_blank_line() {
    let repo = TestRepo::new();
    repo.write("a.py", "import os\n\nx = os.sep\n");
    repo.commit_all("init");
    let id = stage(
        &repo,
        &["-p", "os.sep", "-r", "\"/\"", "--remove-import", "os"],
    );
    assert_eq!(blob_at(&repo, &id, "a.py"), "x = \"/\"\n");
    repo.run(&["discard", &id]).assert_code(0);
    // Deleted by the rewrite itself: its line and the blank line after it.
    let id = stage(&repo, &["-p", "import os", "-r", ""]);
    assert_eq!(blob_at(&repo, &id, "a.py"), "x = os.sep\n");
}

#[test]
fn a_name_merged_into_a_multi_line_import_gets_its_own_line() {
    let repo = TestRepo::new();
    repo.write(
        "a.ts",
        "import {\n  isArray,\n  isObject,\n} from \"@vue/shared\";\n\nconsole.warn(isArray, isObject);\n",
    );
    repo.commit_all("init");
    let id = stage(
        &repo,
        &[
            "-p",
            "console.warn($$$A)",
            "-r",
            "warn($$$A)",
            "--add-import",
            "import { warn } from \"@vue/shared\"",
        ],
    );
    assert_eq!(
        blob_at(&repo, &id, "a.ts"),
        "import {\n  isArray,\n  isObject,\n  warn,\n} from \"@vue/shared\";\n\nwarn(isArray, isObject);\n"
    );
}

/// The id of the preview `scan --stage --json` staged.
fn scan_stage(repo: &TestRepo, config: &str) -> String {
    let out = repo.run(&["scan", "--stage", "--config", config, "--json"]);
    assert!(
        out.code == 0 || out.code == 1,
        "{}\n{}",
        out.stdout,
        out.stderr
    );
    let v = out.json();
    v["id"]
        .as_str()
        .or_else(|| v["staged"]["id"].as_str())
        .unwrap_or_else(|| panic!("an id in {v}"))
        .to_string()
}

#[test]
fn a_rule_s_import_uses_a_metavariable_its_transform_makes() {
    let repo = TestRepo::new();
    repo.write(
        "rules/tasks.yml",
        "id: tasks\nlanguage: typescript\nrule:\n  pattern: legacy.$F($$$A)\n\
         transform:\n  NAME:\n    convert:\n      source: $F\n      toCase: pascalCase\n\
         fix: $NAME.run($$$A)\nimports:\n  add: [\"import { $NAME } from './tasks'\"]\n",
    );
    repo.write(
        "a.ts",
        "import { other } from \"./tasks\";\n\nlegacy.send_mail(other);\nlegacy.parse_args(1);\n",
    );
    repo.commit_all("init");
    let id = scan_stage(&repo, "rules/tasks.yml");
    assert_eq!(
        blob_at(&repo, &id, "a.ts"),
        "import { other, SendMail, ParseArgs } from \"./tasks\";\n\n\
         SendMail.run(other);\nParseArgs.run(1);\n"
    );
    // A metavariable the rule neither captures nor makes is an error, not a skip.
    repo.write(
        "rules/bad.yml",
        "id: bad\nlanguage: typescript\nrule:\n  pattern: legacy.$F($$$A)\nfix: $F($$$A)\n\
         imports:\n  add: [\"import { $NAME } from './tasks'\"]\n",
    );
    let out = repo.run(&["scan", "--config", "rules/bad.yml", "--json"]);
    assert_ne!(out.code, 0);
    assert!(
        out.stdout.contains("imports") && out.stdout.contains("$NAME"),
        "{}",
        out.stdout
    );
}
