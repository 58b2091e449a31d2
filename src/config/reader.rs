//! Reading the configuration's tables (`[index]`, `[query]`, `[[contract]]`, `[[command]]`,
//! settings) into a [`Config`], each mistake an error at its line.

use super::*;

pub(super) struct ConfigReader<'a> {
    pub(super) path: &'a Path,
}

impl ConfigReader<'_> {
    pub(super) fn err(&self, line: u32, message: impl Into<String>) -> ConfigError {
        ConfigError { path: self.path.to_path_buf(), line, message: message.into() }
    }

    /// Applies one top-level key (on `line`) to `cfg`.
    pub(super) fn top_key(&self, cfg: &mut Config, k: &str, line: u32, v: &TomlValue) -> Result<(), ConfigError> {
        match k {
            "index" => self.index(cfg, line, v)?,
            "query" => self.query(cfg, line, v)?,
            key if settings::KEYS.contains(&key) => {
                let scalar = match &v.v {
                    TomlKind::Str(x) => Scalar::Str(x.clone()),
                    TomlKind::Bool(b) => Scalar::Bool(*b),
                    TomlKind::Int(n) => Scalar::Int(*n),
                    _ => Scalar::Str(String::new()),
                };
                let origin = Origin::File(self.path.to_path_buf(), line);
                cfg.settings.apply(key, &scalar, origin).map_err(|e| self.err(line, e.to_string()))?;
            }
            "contract" => self.contracts(cfg, line, v)?,
            "command" => self.commands(cfg, line, v)?,
            "stream" => cfg.stream = Some(self.stream(line, v)?),
            other => return Err(self.err(line, unknown(other, &top_keys(), ""))),
        }
        Ok(())
    }

    /// The `[[contract]]` tables, each with its own name.
    pub(super) fn contracts(&self, cfg: &mut Config, line: u32, v: &TomlValue) -> Result<(), ConfigError> {
        let TomlKind::Array(items) = &v.v else {
            return Err(self.err(line, "`contract` must be an array of tables: write `[[contract]]`"));
        };
        // the line of each name, so that many contracts are checked in linear time
        let mut lines: std::collections::HashMap<String, u32> =
            cfg.contracts.iter().map(|x| (x.name.clone(), x.line)).collect();
        for item in items {
            let c = self.contract(item)?;
            if let Some(prev) = lines.insert(c.name.clone(), c.line) {
                return Err(
                    self.err(c.line, format!("a contract named `{}` is already declared on line {prev}", c.name))
                );
            }
            cfg.contracts.push(c);
        }
        Ok(())
    }

    /// The `[[command]]` tables, each with its own name.
    pub(super) fn commands(&self, cfg: &mut Config, line: u32, v: &TomlValue) -> Result<(), ConfigError> {
        let TomlKind::Array(items) = &v.v else {
            return Err(self.err(line, "`command` must be an array of tables: write `[[command]]`"));
        };
        for item in items {
            let c = self.command(item)?;
            if let Some(prev) = cfg.commands.iter().find(|x| x.name == c.name) {
                let name_line = item.table().and_then(|t| t.iter().find(|(k, _, _)| k == "name")).map(|(_, l, _)| *l);
                return Err(self.err(
                    name_line.unwrap_or(c.line),
                    format!(
                        "a command named `{}` is already declared on line {}; give each command its own name",
                        c.name, prev.line
                    ),
                ));
            }
            cfg.commands.push(c);
        }
        Ok(())
    }

    pub(super) fn index(&self, cfg: &mut Config, line: u32, v: &TomlValue) -> Result<(), ConfigError> {
        let idx = v.table().ok_or_else(|| self.err(line, "`index` must be a table"))?;
        for (ik, kline, iv) in idx {
            let kline = *kline;
            match ik.as_str() {
                "exclude" => {
                    for g in self.strings(iv, kline, "`index.exclude` must be an array of glob strings")? {
                        cfg.walk.exclude.push(g.text);
                    }
                }
                "stage_dirs" => {
                    let what = "`index.stage_dirs` must be an array of repo-relative directories";
                    for d in self.strings(iv, kline, what)? {
                        cfg.walk.stage_dirs.push(d.text.trim_start_matches("./").trim_end_matches('/').to_string());
                    }
                }
                "max_file_size" => match iv.v {
                    TomlKind::Int(n) if n > 0 => cfg.max_file_size = n as u64,
                    _ => return Err(self.err(kline, "`index.max_file_size` must be a positive number of bytes")),
                },
                "hidden" | "vendored" | "follow_links" | "no_ignore" => {
                    let TomlKind::Bool(b) = iv.v else {
                        return Err(self.err(kline, format!("`index.{ik}` must be true or false")));
                    };
                    match ik.as_str() {
                        "hidden" => cfg.walk.hidden = b,
                        "vendored" => cfg.walk.vendored = b,
                        "follow_links" => cfg.walk.follow_links = b,
                        _ => cfg.walk.no_ignore = b,
                    }
                }
                other => return Err(self.err(kline, unknown(other, INDEX_KEYS, "index."))),
            }
        }
        Ok(())
    }

    /// The `[query]` table: the budgets of a run-time evaluation.
    pub(super) fn query(&self, cfg: &mut Config, line: u32, v: &TomlValue) -> Result<(), ConfigError> {
        let t = v.table().ok_or_else(|| self.err(line, "`query` must be a table: write `[query]`"))?;
        for (k, kline, kv) in t {
            if !settings::QUERY_KEYS.contains(&k.as_str()) {
                return Err(self.err(*kline, unknown(k, settings::QUERY_KEYS, "query.")));
            }
            let scalar = match kv.v {
                TomlKind::Int(n) => Scalar::Int(n),
                _ => Scalar::Str(String::new()),
            };
            let origin = Origin::File(self.path.to_path_buf(), *kline);
            cfg.settings.query.apply(k, &scalar, origin).map_err(|e| self.err(*kline, e.to_string()))?;
        }
        Ok(())
    }

    /// A string, or an array of strings.
    pub(super) fn strings(&self, v: &TomlValue, line: u32, what: &str) -> Result<Vec<Located>, ConfigError> {
        match &v.v {
            TomlKind::Str(s) => Ok(vec![Located { text: s.clone(), line: v.line.max(line) }]),
            TomlKind::Array(items) => items
                .iter()
                .map(|x| match &x.v {
                    TomlKind::Str(s) => Ok(Located { text: s.clone(), line: x.line }),
                    _ => Err(self.err(x.line, what.to_string())),
                })
                .collect(),
            _ => Err(self.err(line, what.to_string())),
        }
    }

    /// Strings that must each be one of `valid` (a `noun` of contract `contract`).
    pub(super) fn words(
        &self,
        v: &TomlValue,
        line: u32,
        what: &str,
        contract: &str,
        noun: &str,
        valid: &[&str],
    ) -> Result<Vec<Located>, ConfigError> {
        let words = self.strings(v, line, what)?;
        if let Some(x) = words.iter().find(|x| !valid.contains(&x.text.as_str())) {
            let msg = format!(
                "contract `{contract}`: unknown {noun} `{}`{}",
                x.text,
                suggest(&x.text, valid, &format!("; {noun}s: "))
            );
            return Err(self.err(x.line, msg));
        }
        Ok(words)
    }

    pub(super) fn string(&self, v: &TomlValue, line: u32, what: &str) -> Result<String, ConfigError> {
        match &v.v {
            TomlKind::Str(s) if !s.trim().is_empty() => Ok(s.clone()),
            _ => Err(self.err(line, what.to_string())),
        }
    }

    /// One `[[contract]]` table: its name and kind first, then every other key, checked against
    /// the kind.
    pub(super) fn contract(&self, item: &TomlValue) -> Result<ContractSpec, ConfigError> {
        let t = item.table().ok_or_else(|| self.err(item.line, "each `[[contract]]` must be a table"))?;
        let (name, line) = match t.iter().find(|(key, _, _)| key == "name") {
            Some((_, l, v)) => (self.string(v, *l, "`name` must be a non-empty string")?, *l),
            None => return Err(self.err(item.line, "this contract has no `name`; give it one (`name = \"...\"`)")),
        };
        let kind = self.contract_kind(t, &name, line)?;
        let mut c = ContractSpec {
            name: name.clone(),
            kind,
            description: None,
            line,
            from: Vec::new(),
            to: Vec::new(),
            transitive: true,
            layers: Vec::new(),
            members: Vec::new(),
            target: Vec::new(),
            allowed: Vec::new(),
            stages: Vec::new(),
            checks: Vec::new(),
            rules: None,
            exclude_kinds: Vec::new(),
            exceptions: Vec::new(),
        };
        for (k, kl, v) in t {
            self.contract_key(&name, kind, k, *kl)?;
            self.contract_value(&mut c, k, *kl, v)?;
        }
        Ok(c)
    }

    /// The `kind` of contract `name` (whose name is on `line`).
    pub(super) fn contract_kind(
        &self,
        t: &[(String, u32, TomlValue)],
        name: &str,
        line: u32,
    ) -> Result<ContractKind, ConfigError> {
        let kinds: Vec<&str> = ContractKind::ALL.iter().map(|k| k.name()).collect();
        match t.iter().find(|(key, _, _)| key == "kind") {
            Some((_, l, v)) => {
                let s = self.string(v, *l, "`kind` must be a string")?;
                Ok(*ContractKind::ALL.iter().find(|k| k.name() == s).ok_or_else(|| {
                    self.err(
                        *l,
                        format!("contract `{name}`: unknown kind `{s}`{}", suggest(&s, &kinds, "; valid kinds: ")),
                    )
                })?)
            }
            None => Err(self.err(line, format!("contract `{name}` has no `kind`; one of {}", kinds.join(", ")))),
        }
    }

    /// Checks that key `k` (on line `kl`) belongs to contracts of `kind`; Err names the kind it
    /// belongs to, or the nearest valid key.
    pub(super) fn contract_key(&self, name: &str, kind: ContractKind, k: &str, kl: u32) -> Result<(), ConfigError> {
        if COMMON_KEYS.contains(&k) || kind.keys().contains(&k) {
            return Ok(());
        }
        let mut valid: Vec<&str> = COMMON_KEYS.to_vec();
        valid.extend(kind.keys());
        let other = ContractKind::ALL.iter().find(|o| o.keys().contains(&k));
        let msg = match other {
            Some(o) if !valid.contains(&k) => format!(
                "contract `{name}`: `{k}` belongs to `{}` contracts, not `{}`; keys here: {}",
                o.name(),
                kind.name(),
                valid.join(", ")
            ),
            _ => format!("contract `{name}`: {}", unknown(k, &valid, "")),
        };
        Err(self.err(kl, msg))
    }

    /// Sets the value `v` of key `k` (on line `kl`, valid for the contract's kind) in `c`.
    pub(super) fn contract_value(
        &self,
        c: &mut ContractSpec,
        k: &str,
        kl: u32,
        v: &TomlValue,
    ) -> Result<(), ConfigError> {
        let name = c.name.clone();
        let sel = "must be a selector (a stage, path glob, module or package) or an array of them";
        let what = format!("contract `{name}`: `{k}` {sel}");
        match k {
            "name" | "kind" => {}
            "description" => c.description = Some(self.string(v, kl, "`description` must be a string")?),
            "from" => c.from = self.strings(v, kl, &what)?,
            "to" => c.to = self.strings(v, kl, &what)?,
            "members" => c.members = self.strings(v, kl, &what)?,
            "target" => c.target = self.strings(v, kl, &what)?,
            "allowed" => c.allowed = self.strings(v, kl, &what)?,
            "stages" => c.stages = self.strings(v, kl, &what)?,
            "transitive" => {
                let TomlKind::Bool(b) = v.v else {
                    return Err(self.err(kl, format!("contract `{name}`: `transitive` must be true or false")));
                };
                c.transitive = b;
            }
            "layers" => {
                let TomlKind::Array(items) = &v.v else {
                    return Err(self.err(kl, format!("contract `{name}`: `layers` must be an array, top layer first")));
                };
                for layer in items {
                    c.layers.push(self.strings(layer, layer.line, &what)?);
                }
            }
            "exclude_kinds" => {
                let what = "`exclude_kinds` must be an array of edge kinds";
                c.exclude_kinds = self.words(v, kl, what, &name, "edge kind", EDGE_KINDS)?;
            }
            "checks" => {
                let what = "`checks` must be an array of `undeclared`, `unused`";
                c.checks = self.words(v, kl, what, &name, "check", MANIFEST_CHECKS)?;
            }
            "rules" => {
                let s = self.string(v, kl, "`rules` must be the path of a `.dl` file")?;
                c.rules = Some(Located { text: s, line: kl });
            }
            "exceptions" => {
                let TomlKind::Array(items) = &v.v else {
                    return Err(self.err(
                        kl,
                        format!("contract `{name}`: `exceptions` must be an array of {{ from, to, reason }} tables"),
                    ));
                };
                for x in items {
                    c.exceptions.push(self.exception(&name, c.kind, x)?);
                }
            }
            _ => unreachable!("key {k} is checked against the kind's keys"),
        }
        Ok(())
    }

    /// One `[[command]]` table: its name first, then every other key.
    pub(super) fn command(&self, item: &TomlValue) -> Result<CommandSpec, ConfigError> {
        let t = item.table().ok_or_else(|| self.err(item.line, "each `[[command]]` must be a table"))?;
        let get = |k: &str| t.iter().find(|(key, _, _)| key == k);
        let (name, line) = match get("name") {
            Some((_, l, v)) => (self.string(v, *l, "a command's `name` must be a non-empty string")?, *l),
            None => return Err(self.err(item.line, "this command has no `name`; give it one (`name = \"tests\"`)")),
        };
        if !name.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)) {
            return Err(self.err(
                line,
                format!("command name `{name}` may use only letters, digits, `.`, `_` and `-` (it names files)"),
            ));
        }
        let mut c = CommandSpec {
            name: name.clone(),
            run: String::new(),
            stages: Vec::new(),
            lane: Lane::Fast,
            timeout_secs: DEFAULT_COMMAND_TIMEOUT_SECS,
            technique: None,
            line: item.line,
        };
        for (k, kl, v) in t {
            self.command_value(&mut c, k, *kl, v)?;
        }
        if c.run.is_empty() {
            return Err(self.err(
                line,
                format!("command `{name}` has no `run`; give it the shell command to run (`run = \"make test\"`)"),
            ));
        }
        Ok(c)
    }

    /// Sets the value `v` of key `k` (on line `kl`) in command `c`.
    pub(super) fn command_value(
        &self,
        c: &mut CommandSpec,
        k: &str,
        kl: u32,
        v: &TomlValue,
    ) -> Result<(), ConfigError> {
        let name = c.name.clone();
        match k {
            "name" => {}
            "run" => {
                let what = format!("command `{name}`: `run` must be a non-empty shell command string");
                c.run = self.string(v, kl, &what)?;
            }
            "stages" => {
                let what = format!("command `{name}`: `stages` must be an array of stage names, like [\"core\"]");
                let TomlKind::Array(items) = &v.v else {
                    return Err(self.err(kl, what));
                };
                for x in items {
                    match &x.v {
                        TomlKind::Str(s) if !s.trim().is_empty() => c.stages.push(s.clone()),
                        _ => return Err(self.err(x.line, what)),
                    }
                }
            }
            "lane" => {
                let lanes: Vec<&str> = Lane::ALL.iter().map(|l| l.name()).collect();
                let bad = |s: &str| {
                    format!(
                        "command `{name}`: `lane` must be \"fast\" (every pass) or \"slow\" (only on request), not {s}"
                    )
                };
                let TomlKind::Str(s) = &v.v else {
                    return Err(self.err(kl, bad("a non-string")));
                };
                c.lane = *Lane::ALL.iter().find(|l| l.name() == s).ok_or_else(|| {
                    let hint = match nearest(s, lanes.iter().copied()) {
                        Some(n) => format!("; did you mean `{n}`?"),
                        None => String::new(),
                    };
                    self.err(kl, format!("{}{hint}", bad(&format!("`{s}`"))))
                })?;
            }
            "technique" => {
                let TomlKind::Str(t) = &v.v else {
                    return Err(self.err(kl, format!("command `{name}`: `technique` must be a string")));
                };
                c.technique =
                    Some(technique::parse(t).map_err(|e| self.err(kl, format!("command `{name}`: `technique`: {e}")))?);
            }
            "timeout_secs" => match v.v {
                TomlKind::Int(n) if n > 0 => c.timeout_secs = n as u64,
                _ => {
                    return Err(self.err(
                        kl,
                        format!("command `{name}`: `timeout_secs` must be a whole number of seconds above 0"),
                    ));
                }
            },
            other => return Err(self.err(kl, format!("command `{name}`: {}", unknown(other, COMMAND_KEYS, "")))),
        }
        Ok(())
    }

    pub(super) fn exception(
        &self,
        contract: &str,
        kind: ContractKind,
        x: &TomlValue,
    ) -> Result<ExceptionSpec, ConfigError> {
        let by_site = kind == ContractKind::Resolves;
        let shape = if by_site { "{ at, name, reason }" } else { "{ from, to, reason }" };
        let t = x
            .table()
            .ok_or_else(|| self.err(x.line, format!("contract `{contract}`: each exception is a table {shape}")))?;
        let mut e = ExceptionSpec { from: None, to: None, at: None, name: None, reason: String::new(), line: x.line };
        let keys = if by_site { SITE_EXCEPTION_KEYS } else { EXCEPTION_KEYS };
        for (k, kl, v) in t {
            if !keys.contains(&k.as_str()) {
                return Err(self.err(*kl, format!("contract `{contract}`: {}", unknown(k, keys, ""))));
            }
            let what = format!("contract `{contract}`: exception `{k}` must be one selector string");
            let located = |text: String| Some(Located { text, line: *kl });
            match k.as_str() {
                "from" => e.from = located(self.string(v, *kl, &what)?),
                "to" => e.to = located(self.string(v, *kl, &what)?),
                "at" => {
                    let what = format!("contract `{contract}`: exception `at` must be one `file:line` string");
                    let text = self.string(v, *kl, &what)?;
                    if site(&text).is_none() {
                        return Err(self.err(*kl, format!("{what}, such as \"src/app.py:12\"; got {text:?}")));
                    }
                    e.at = located(text);
                }
                "name" => {
                    let what = format!("contract `{contract}`: exception `name` must be the imported name");
                    e.name = located(self.string(v, *kl, &what)?);
                }
                _ => {
                    e.reason = self.string(
                        v,
                        *kl,
                        &format!("contract `{contract}`: an exception's `reason` must say why, in words"),
                    )?
                }
            }
        }
        if e.reason.is_empty() {
            return Err(self.err(
                x.line,
                format!(
                    "contract `{contract}`: this exception has no `reason`; every exception must say why it exists"
                ),
            ));
        }
        if by_site && e.at.is_none() {
            return Err(self.err(
                x.line,
                format!(
                    "contract `{contract}`: an exception needs `at = \"file:line\"`, or it would excuse everything"
                ),
            ));
        }
        if !by_site && e.from.is_none() && e.to.is_none() {
            return Err(self.err(
                x.line,
                format!(
                    "contract `{contract}`: an exception needs `from`, `to` or both, or it would excuse everything"
                ),
            ));
        }
        Ok(e)
    }
}
