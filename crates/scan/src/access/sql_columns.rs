//! The columns of one relation that a logged SQL statement reads, found with a real SQL parser
//! (`sqlparser`, PostgreSQL dialect), for pgaudit entries: each names the relation it audits
//! and carries the statement's text.
//!
//! The answer is [`Columns::All`] (`*`, `rel.*`, a whole-row reference such as `SELECT rel` or
//! `row_to_json(rel)`, `COPY rel TO`), [`Columns::Named`] (every column of the relation named
//! anywhere in the statement), or [`Columns::Unknown`] whenever a column cannot be attributed
//! for sure: a statement that does not parse, a kind of statement or clause this module does
//! not follow, an unqualified column where the relation shares the scope with another one, a
//! relation the statement does not name (a view's base table). "Unknown" is never "none": a
//! false "nobody reads this attribute" is the worst answer this tool can give, so every doubt
//! errs towards Unknown, or towards naming a column too many.
//!
//! Names fold as PostgreSQL folds them: unquoted to lower case, quoted as written. An
//! unqualified relation name equal to the audited relation's name is taken to be it (the
//! search_path found it); an alias hides the name, as in PostgreSQL.

use std::collections::BTreeSet;
use std::ops::ControlFlow;
use std::sync::Mutex;

use sqlparser::ast::{
    CopySource, Distinct, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, GroupByExpr,
    Ident, JoinConstraint, JoinOperator, ObjectName, ObjectNamePart, OrderByKind, Query, Select,
    SelectItem, SelectItemQualifiedWildcardKind, SetExpr, Statement, TableFactor, Visit, Visitor,
};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;

pub use super::column_sets::Columns;

/// A statement's text parsed once, to ask about each relation it reads; each answer is kept,
/// so that a text logged again and again is walked once per relation.
#[derive(Debug, Default)]
pub struct Statements {
    parsed: Option<Vec<Statement>>,
    answers: Mutex<Vec<(String, Columns)>>,
}

impl PartialEq for Statements {
    fn eq(&self, other: &Statements) -> bool {
        self.parsed == other.parsed
    }
}

impl Clone for Statements {
    fn clone(&self) -> Statements {
        Statements {
            parsed: self.parsed.clone(),
            answers: Mutex::default(),
        }
    }
}

impl Statements {
    /// Parse `text`; a text that does not parse answers Unknown for every relation.
    pub fn parse(text: &str) -> Statements {
        Statements {
            parsed: Parser::parse_sql(&PostgreSqlDialect {}, text).ok(),
            answers: Mutex::default(),
        }
    }

    /// No statement: every relation is Unknown (pgaudit's `<not logged>`).
    pub fn unknown() -> Statements {
        Statements::default()
    }

    /// What the statements read of `relation`, written as pgaudit logs it (`schema.name`,
    /// each part quoted where PostgreSQL's quote_identifier quotes it).
    pub fn columns(&self, relation: &str) -> Columns {
        // A poisoned lock only loses the answers kept so far.
        let mut answers = self.answers.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, c)) = answers.iter().find(|(r, _)| r == relation) {
            return c.clone();
        }
        let c = self.walk(relation);
        answers.push((relation.to_string(), c.clone()));
        c
    }

    fn walk(&self, relation: &str) -> Columns {
        let Some(statements) = &self.parsed else {
            return Columns::Unknown;
        };
        let mut walk = Walk {
            target: target_parts(relation),
            found: false,
            all: false,
            unknown: statements.is_empty(),
            named: BTreeSet::new(),
        };
        for statement in statements {
            walk.statement(statement);
        }
        if walk.all {
            Columns::All
        } else if walk.unknown || !walk.found {
            Columns::Unknown
        } else {
            Columns::Named(super::NameSet::counted(walk.named))
        }
    }
}

/// What `statement` reads of `relation` (see [`Statements::columns`]).
pub fn columns_read(statement: &str, relation: &str) -> Columns {
    Statements::parse(statement).columns(relation)
}

/// pgaudit's `schema.name` in parts: split at dots outside double quotes, quotes removed.
fn target_parts(relation: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut quoted = false;
    let mut chars = relation.chars().peekable();
    while let Some(c) = chars.next() {
        let push = match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                '"'
            }
            '"' => {
                quoted = !quoted;
                continue;
            }
            '.' if !quoted => {
                parts.push(String::new());
                continue;
            }
            c if quoted => c,
            c => c.to_ascii_lowercase(),
        };
        if let Some(p) = parts.last_mut() {
            p.push(push);
        }
    }
    parts
}

/// An identifier as PostgreSQL folds it.
fn fold(ident: &Ident) -> String {
    match ident.quote_style {
        Some(_) => ident.value.clone(),
        None => ident.value.to_ascii_lowercase(),
    }
}

/// An object name's parts folded; `None` for a part that is no plain identifier.
fn name_parts(name: &ObjectName) -> Option<Vec<String>> {
    name.0
        .iter()
        .map(|p| match p {
            ObjectNamePart::Identifier(i) => Some(fold(i)),
            ObjectNamePart::Function(_) => None,
        })
        .collect()
}

/// One relation of a FROM clause: the names that refer to it, and whether it is the audited one.
struct Rel {
    bindings: Vec<Vec<String>>,
    target: bool,
}

/// The relations a query level sees, and the level around it (correlated subqueries).
struct Scope<'p> {
    rels: Vec<Rel>,
    parent: Option<&'p Scope<'p>>,
}

impl<'p> Scope<'p> {
    fn chain(&self) -> impl Iterator<Item = &Scope<'p>> {
        std::iter::successors(Some(self), |s| s.parent)
    }
}

/// What a qualifier (`r.` in `r.col`) refers to.
enum Qualifier {
    Target,
    Other,
    Doubtful,
}

/// A name an expression uses: a column (`col`, `r.col`) or a star (`*`, `r.*`).
enum Ref {
    Column(Vec<String>),
    Star(Vec<String>),
    Opaque,
}

/// The names an expression uses at its own level, and the subqueries it holds.
#[derive(Default)]
struct Collector {
    depth: usize,
    refs: Vec<Ref>,
    queries: Vec<Query>,
}

impl Visitor for Collector {
    type Break = ();

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<()> {
        if self.depth == 0 {
            self.queries.push(query.clone());
        }
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
        if self.depth > 0 {
            return ControlFlow::Continue(());
        }
        match expr {
            Expr::Identifier(i) => self.refs.push(Ref::Column(vec![fold(i)])),
            Expr::CompoundIdentifier(parts) => {
                self.refs
                    .push(Ref::Column(parts.iter().map(fold).collect()));
            }
            Expr::Wildcard(_) => self.refs.push(Ref::Star(Vec::new())),
            Expr::QualifiedWildcard(name, _) => self.refs.push(star(name)),
            // `f(r.*)` is a whole row; `count(*)` reads no column.
            Expr::Function(f) => {
                if let FunctionArguments::List(list) = &f.args {
                    for arg in &list.args {
                        let (FunctionArg::Named { arg, .. }
                        | FunctionArg::ExprNamed { arg, .. }
                        | FunctionArg::Unnamed(arg)) = arg;
                        if let FunctionArgExpr::QualifiedWildcard(name) = arg {
                            self.refs.push(star(name));
                        }
                    }
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

fn star(name: &ObjectName) -> Ref {
    name_parts(name).map_or(Ref::Opaque, Ref::Star)
}

/// The walk of one statement for one relation.
struct Walk {
    target: Vec<String>,
    found: bool,
    all: bool,
    unknown: bool,
    named: BTreeSet<String>,
}

impl Walk {
    fn statement(&mut self, statement: &Statement) {
        match statement {
            Statement::Query(q) => self.query(q, None),
            Statement::Copy {
                source, to: true, ..
            } => match source {
                CopySource::Table {
                    table_name,
                    columns,
                } => {
                    if name_parts(table_name).is_some_and(|p| self.is_target(&p)) {
                        self.found = true;
                        if columns.is_empty() {
                            self.all = true;
                        }
                        self.named.extend(columns.iter().map(fold));
                    }
                }
                CopySource::Query(q) => self.query(q, None),
            },
            // INSERT … SELECT, CREATE TABLE AS, EXPLAIN, DECLARE, EXECUTE …: not followed.
            _ => self.unknown = true,
        }
    }

    /// Whether a relation name written in a FROM clause is the audited relation: qualified
    /// alike (a database before the schema allowed), or its bare name (search_path).
    fn is_target(&self, parts: &[String]) -> bool {
        let t = &self.target;
        match parts.len() {
            1 => t.last() == parts.last(),
            n => t.len() >= 2 && n <= 3 && parts[n - 2..] == t[t.len() - 2..],
        }
    }

    fn query(&mut self, q: &Query, parent: Option<&Scope<'_>>) {
        if !q.pipe_operators.is_empty() {
            self.unknown = true;
        }
        if let Some(with) = &q.with {
            for cte in &with.cte_tables {
                // A CTE named as the relation hides it in some places and not in others.
                if self.target.last() == Some(&fold(&cte.alias.name)) {
                    self.unknown = true;
                }
                self.query(&cte.query, parent);
            }
        }
        let empty = Scope {
            rels: Vec::new(),
            parent,
        };
        let scope = match q.body.as_ref() {
            SetExpr::Select(select) => self.select(select, parent),
            body => {
                self.set_expr(body, parent);
                Scope {
                    rels: Vec::new(),
                    parent,
                }
            }
        };
        if let Some(order) = &q.order_by {
            if let OrderByKind::Expressions(exprs) = &order.kind {
                for e in exprs {
                    self.visited(&e.expr, &scope);
                }
            }
        }
        if let Some(limit) = &q.limit_clause {
            self.visited(limit, &empty);
        }
        if let Some(fetch) = &q.fetch {
            self.visited(fetch, &empty);
        }
    }

    fn set_expr(&mut self, body: &SetExpr, parent: Option<&Scope<'_>>) {
        match body {
            SetExpr::Select(select) => {
                self.select(select, parent);
            }
            SetExpr::Query(q) => self.query(q, parent),
            SetExpr::SetOperation { left, right, .. } => {
                self.set_expr(left, parent);
                self.set_expr(right, parent);
            }
            SetExpr::Values(values) => self.visited(
                values,
                &Scope {
                    rels: Vec::new(),
                    parent,
                },
            ),
            // `TABLE name` is `SELECT * FROM name`.
            SetExpr::Table(t) => {
                let parts: Vec<String> = [&t.schema_name, &t.table_name]
                    .into_iter()
                    .flatten()
                    .map(fold)
                    .collect();
                if self.is_target(&parts) {
                    self.found = true;
                    self.all = true;
                }
            }
            _ => self.unknown = true,
        }
    }

    fn select<'p>(&mut self, s: &Select, parent: Option<&'p Scope<'p>>) -> Scope<'p> {
        if !s.lateral_views.is_empty()
            || s.prewhere.is_some()
            || !s.connect_by.is_empty()
            || !s.cluster_by.is_empty()
            || !s.distribute_by.is_empty()
            || !s.sort_by.is_empty()
            || s.qualify.is_some()
            || s.value_table_mode.is_some()
        {
            self.unknown = true;
        }
        let mut rels = Vec::new();
        for from in &s.from {
            self.relations(&from.relation, &mut rels);
            for join in &from.joins {
                self.relations(&join.relation, &mut rels);
            }
        }
        let scope = Scope { rels, parent };
        let has_target = scope.rels.iter().any(|r| r.target);
        for from in &s.from {
            self.factor_inside(&from.relation, &scope);
            for join in &from.joins {
                self.factor_inside(&join.relation, &scope);
                self.join(&join.join_operator, has_target, &scope);
            }
        }
        for item in &s.projection {
            match item {
                SelectItem::Wildcard(_) => self.all |= has_target,
                SelectItem::QualifiedWildcard(
                    SelectItemQualifiedWildcardKind::ObjectName(n),
                    _,
                ) => self.resolve(star(n), &scope),
                SelectItem::QualifiedWildcard(SelectItemQualifiedWildcardKind::Expr(e), _)
                | SelectItem::UnnamedExpr(e)
                | SelectItem::ExprWithAlias { expr: e, .. }
                | SelectItem::ExprWithAliases { expr: e, .. } => self.visited(e, &scope),
            }
        }
        if let Some(Distinct::On(exprs)) = &s.distinct {
            self.visited(exprs, &scope);
        }
        if let Some(e) = &s.selection {
            self.visited(e, &scope);
        }
        if let GroupByExpr::Expressions(exprs, _) = &s.group_by {
            self.visited(exprs, &scope);
        }
        if let Some(e) = &s.having {
            self.visited(e, &scope);
        }
        self.visited(&s.named_window, &scope);
        scope
    }

    /// The relations a FROM item brings into scope.
    fn relations(&mut self, factor: &TableFactor, rels: &mut Vec<Rel>) {
        let alias_of = |alias: &Option<sqlparser::ast::TableAlias>| {
            alias
                .iter()
                .map(|a| vec![fold(&a.name)])
                .collect::<Vec<_>>()
        };
        match factor {
            TableFactor::Table {
                name, alias, args, ..
            } => {
                let parts = name_parts(name);
                let target = args.is_none() && parts.as_ref().is_some_and(|p| self.is_target(p));
                self.found |= target;
                // `AS r(a, b)` renames the columns by position: `r.a` is some other column.
                if target && alias.as_ref().is_some_and(|a| !a.columns.is_empty()) {
                    self.unknown = true;
                }
                let bindings = match (alias, parts) {
                    (Some(a), _) => vec![vec![fold(&a.name)]],
                    (None, Some(p)) if target => {
                        let n = self.target.len();
                        vec![self.target[n - 1..].to_vec(), self.target.clone(), p]
                    }
                    (None, Some(p)) => vec![p[p.len().saturating_sub(1)..].to_vec(), p],
                    (None, None) => Vec::new(),
                };
                rels.push(Rel { bindings, target });
            }
            TableFactor::NestedJoin {
                table_with_joins,
                alias,
            } => {
                let start = rels.len();
                self.relations(&table_with_joins.relation, rels);
                for join in &table_with_joins.joins {
                    self.relations(&join.relation, rels);
                }
                // An alias over a join hides the names inside.
                if alias.is_some() && rels[start..].iter().any(|r| r.target) {
                    self.unknown = true;
                }
            }
            TableFactor::Derived { alias, .. }
            | TableFactor::TableFunction { alias, .. }
            | TableFactor::Function { alias, .. }
            | TableFactor::UNNEST { alias, .. } => rels.push(Rel {
                bindings: alias_of(alias),
                target: false,
            }),
            _ => {
                self.unknown = true;
                rels.push(Rel {
                    bindings: Vec::new(),
                    target: false,
                });
            }
        }
    }

    /// What a FROM item holds besides its name: subqueries, function arguments.
    fn factor_inside(&mut self, factor: &TableFactor, scope: &Scope<'_>) {
        match factor {
            TableFactor::Table {
                args: Some(args), ..
            } => self.visited(args, scope),
            TableFactor::Derived {
                lateral, subquery, ..
            } => self.query(subquery, if *lateral { Some(scope) } else { scope.parent }),
            TableFactor::NestedJoin {
                table_with_joins, ..
            } => {
                self.factor_inside(&table_with_joins.relation, scope);
                for join in &table_with_joins.joins {
                    self.factor_inside(&join.relation, scope);
                    let has_target = scope.rels.iter().any(|r| r.target);
                    self.join(&join.join_operator, has_target, scope);
                }
            }
            TableFactor::TableFunction { expr, .. } => self.visited(expr, scope),
            TableFactor::Function { args, .. } => self.visited(args, scope),
            TableFactor::UNNEST { array_exprs, .. } => self.visited(array_exprs, scope),
            _ => {}
        }
    }

    fn join(&mut self, op: &JoinOperator, has_target: bool, scope: &Scope<'_>) {
        let constraint = match op {
            JoinOperator::Join(c)
            | JoinOperator::Inner(c)
            | JoinOperator::Left(c)
            | JoinOperator::LeftOuter(c)
            | JoinOperator::Right(c)
            | JoinOperator::RightOuter(c)
            | JoinOperator::FullOuter(c)
            | JoinOperator::CrossJoin(c) => c,
            _ => {
                self.unknown = true;
                return;
            }
        };
        match constraint {
            JoinConstraint::On(e) => self.visited(e, scope),
            // Both sides have each USING column; naming it for the relation may name one
            // too many when the relation is not on either side of this join, never too few.
            JoinConstraint::Using(names) | JoinConstraint::UsingAlias(names, _) => {
                if has_target {
                    for n in names {
                        match name_parts(n).and_then(|p| p.last().cloned()) {
                            Some(c) => {
                                self.named.insert(c);
                            }
                            None => self.unknown = true,
                        }
                    }
                }
            }
            JoinConstraint::Natural => self.unknown |= has_target,
            JoinConstraint::None => {}
        }
    }

    /// The names any node uses at this level, resolved in `scope`, then its subqueries.
    fn visited<V: Visit>(&mut self, node: &V, scope: &Scope<'_>) {
        let mut c = Collector::default();
        let _ = node.visit(&mut c);
        for r in c.refs {
            self.resolve(r, scope);
        }
        for q in &c.queries {
            self.query(q, Some(scope));
        }
    }

    fn resolve(&mut self, r: Ref, scope: &Scope<'_>) {
        match r {
            Ref::Opaque => self.unknown = true,
            Ref::Star(parts) if parts.is_empty() => {
                self.all |= scope.rels.iter().any(|r| r.target);
            }
            Ref::Star(parts) => match qualifier(&parts, parts.len(), scope) {
                Some(Qualifier::Target) => self.all = true,
                Some(Qualifier::Other) => {}
                Some(Qualifier::Doubtful) | None => self.unknown = true,
            },
            Ref::Column(parts) if parts.len() == 1 => self.unqualified(&parts[0], scope),
            Ref::Column(parts) => {
                // The longest qualifier first: `public.roads.geom` before `public.roads`.
                for k in (1..parts.len()).rev() {
                    match qualifier(&parts, k, scope) {
                        Some(Qualifier::Target) => {
                            self.named.insert(parts[k].clone());
                            return;
                        }
                        Some(Qualifier::Other) => return,
                        Some(Qualifier::Doubtful) => {
                            self.unknown = true;
                            return;
                        }
                        None => {}
                    }
                }
                // No relation of that name: a composite field written without parentheses,
                // or a name this walk did not see.
                self.unknown = true;
            }
        }
    }

    /// An unqualified name: the column of the only relation of the innermost level that
    /// has relations, or the whole row of a relation of that name.
    fn unqualified(&mut self, name: &str, scope: &Scope<'_>) {
        let whole = [name.to_string()];
        if qualifier(&whole, 1, scope).is_some_and(|q| matches!(q, Qualifier::Target)) {
            self.all = true;
            return;
        }
        if !scope.chain().any(|s| s.rels.iter().any(|r| r.target)) {
            return;
        }
        match scope.chain().find(|s| !s.rels.is_empty()) {
            Some(s) if s.rels.len() == 1 && s.rels[0].target => {
                self.named.insert(name.to_string());
            }
            _ => self.unknown = true,
        }
    }
}

/// What the first `k` parts of `parts` name, at the innermost level where they name
/// anything; `None` when no level has such a relation.
fn qualifier(parts: &[String], k: usize, scope: &Scope<'_>) -> Option<Qualifier> {
    let prefix = &parts[..k];
    for level in scope.chain() {
        let mut hits = level
            .rels
            .iter()
            .filter(|r| r.bindings.iter().any(|b| b.as_slice() == prefix));
        let Some(first) = hits.next() else { continue };
        let same = hits.all(|r| r.target == first.target);
        return Some(match (same, first.target) {
            (false, _) => Qualifier::Doubtful,
            (true, true) => Qualifier::Target,
            (true, false) => Qualifier::Other,
        });
    }
    None
}

#[cfg(test)]
#[path = "sql_columns_tests.rs"]
mod tests;
