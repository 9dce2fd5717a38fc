/*!
The warning about our rule keys written where ast-grep refuses them (issue 51 item 2).

`imports:` and `edits:` at a rule's top level make ast-grep (its CLI, `test`, `lsp`, the
VS Code extension) refuse the whole project with `unknown field`; under
`metadata: {astedit: …}` it reads the file and ignores them. Both forms are read; the
top-level one is pointed out only where ast-grep would read the project (an
`sgconfig.yml`), and once per content of each rule file: the digests already warned
about are remembered under the git directory's `astedit/rule-form/`.
*/

use crate::repo::Repo;
use crate::scan::rules::TopLevelForm;
use crate::scan::rules::SGCONFIG_NAMES;

/// The warnings to give about `forms` in a run that read the config files `sources`
/// (as displayed): none without an `sgconfig.yml`, none for a file's content warned
/// about before. A warning given is remembered (a memory that cannot be written only
/// means the warning comes again).
pub fn notices(repo: &Repo, forms: &[TopLevelForm], sources: &[String]) -> Vec<String> {
    if forms.is_empty() || !has_sgconfig(repo, sources) {
        return Vec::new();
    }
    let dir = repo.common_dir.join("astedit").join("rule-form");
    let mut out = Vec::new();
    for form in forms {
        let marker = dir.join(&form.digest);
        if marker.exists() {
            continue;
        }
        let _ = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&marker, &form.file));
        out.push(format!(
            "{}: `imports:`/`edits:` at a rule's top level make ast-grep refuse this project \
             (`unknown field`); put them under `metadata: {{astedit: {{imports: …, edits: …}}}}`, \
             which both read (said once for this content of the file)",
            form.file
        ));
    }
    out
}

/// Whether ast-grep would read this project: an `sgconfig.yml` at the repository's
/// root or among the config files read.
fn has_sgconfig(repo: &Repo, sources: &[String]) -> bool {
    SGCONFIG_NAMES
        .iter()
        .any(|n| repo.workdir.join(n).is_file())
        || sources.iter().any(|s| {
            let name = s.rsplit(['/', '\\']).next().unwrap_or(s);
            SGCONFIG_NAMES.contains(&name)
        })
}
