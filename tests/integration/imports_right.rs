//! Imports that vanished or broke a file (issue 53 items 3 and 8): a removed or
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
