//! The logical schema of a rental site's listings (TEMPLATES.md §2.3) and the scoped
//! statement every validated query runs inside.
//!
//! Listings are stored as JSON rows (`rental_rows(site_id, entity, id, data, updated_at)`,
//! in their own D1 database). A statement never names that table: it reads the logical
//! tables (`rooms`, `posts`, `room_seeking_posts`, and `my_rooms` for a signed-in user),
//! which [`RentalSchema::scoped_sql`] defines as CTEs filtered by the bound site id, so
//! whatever the statement says, it sees only the requesting site's rows.

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

use crate::boundary::{ColumnSchema, ColumnType, TableSchema};

/// The listing kinds (seed `entityHint`).
pub const ENTITIES: [&str; 3] = ["room", "post", "room_seeking_post"];

/// The most listings of one kind a site holds, as the SQL cost model assumes
/// ([`super::sql`]): the demo has 3,000 rooms, 1,200 posts and 800 room-seeking posts.
pub const MAX_ROWS_PER_TABLE: u64 = 5_000;

/// The table a landlord's own rooms appear under (user-scoped; rows whose `owner_id` is the
/// signed-in user).
pub const MY_ROOMS: &str = "my_rooms";

/// One entity's logical table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntitySchema {
    /// `room`, `post` or `room_seeking_post`.
    pub entity: String,
    /// Its page, with `{id}`: `/rooms/{id}`.
    pub path: String,
    /// What it holds, for the model.
    #[serde(default)]
    pub description: String,
    /// Its columns besides `id` (read from the row's JSON by name).
    pub columns: Vec<ColumnSchema>,
}

impl EntitySchema {
    /// The table statements name it by: `rooms`, `posts`, `room_seeking_posts`.
    pub fn table(&self) -> String {
        format!("{}s", self.entity)
    }

    /// The page of the listing `id` (ids are URL-safe by upload validation; anything
    /// else is percent-encoded).
    pub fn path_for(&self, id: &str) -> String {
        let mut encoded = String::new();
        for byte in id.bytes() {
            if byte.is_ascii_alphanumeric() || b"-_.~".contains(&byte) {
                encoded.push(char::from(byte));
            } else {
                encoded.push_str(&format!("%{byte:02X}"));
            }
        }
        self.path.replace("{id}", &encoded)
    }
}

/// A site's listings schema: what the SQL prompt describes and what statements may read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RentalSchema {
    /// The entities, in prompt order.
    pub entities: Vec<EntitySchema>,
}

fn col(name: &str, column_type: ColumnType, description: &str) -> ColumnSchema {
    ColumnSchema::new(name, column_type).described(description)
}

impl Default for RentalSchema {
    /// Rooms, posts and room-seeking posts with the columns of TEMPLATES.md §2.3.
    fn default() -> Self {
        use ColumnType::{Date, Integer, Real, Text};
        let place = [
            col("district", Text, "quận/huyện, e.g. 'Quận 1', 'Gò Vấp'"),
            col("ward", Text, "phường/xã"),
            col("city", Text, "'Hà Nội' or 'TP.HCM'"),
        ];
        let mut rooms = vec![
            col("title", Text, "listing title"),
            col("price", Integer, "monthly rent, VND"),
            col("area_m2", Real, "floor area, m²"),
        ];
        rooms.extend(place.iter().cloned());
        rooms.extend([
            col("address", Text, "street address"),
            col("status", Text, "'available' or 'rented'"),
            col("owner_id", Text, "the landlord's user id"),
            col("created_at", Date, "listed on, YYYY-MM-DD"),
        ]);
        let mut posts = vec![
            col("title", Text, "post title"),
            col("price", Integer, "monthly rent, VND"),
        ];
        posts.extend(place.iter().cloned());
        posts.extend([
            col("status", Text, "'active' or 'closed'"),
            col("created_at", Date, "posted on, YYYY-MM-DD"),
        ]);
        let mut seeking = vec![
            col("title", Text, "what the tenant looks for"),
            col("budget_max", Integer, "highest monthly rent, VND"),
        ];
        seeking.extend(place.iter().cloned());
        seeking.push(col("created_at", Date, "posted on, YYYY-MM-DD"));
        let entity = |entity: &str, path: &str, description: &str, columns| EntitySchema {
            entity: entity.into(),
            path: path.into(),
            description: description.into(),
            columns,
        };
        Self {
            entities: vec![
                entity(
                    "room",
                    "/rooms/{id}",
                    "phòng cho thuê (rooms for rent)",
                    rooms,
                ),
                entity(
                    "post",
                    "/posts/{id}",
                    "bài đăng cho thuê (rental posts)",
                    posts,
                ),
                entity(
                    "room_seeking_post",
                    "/room-seeking-posts/{id}",
                    "bài tìm phòng (tenants looking for a room)",
                    seeking,
                ),
            ],
        }
    }
}

/// A name a statement may use for a column: `[a-z_][a-z0-9_]*`, at most 63 characters.
pub fn is_column_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase() || c == '_')
        && name.len() <= 63
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

impl RentalSchema {
    /// Checks a merchant-supplied schema: known entities, each once, safe column names
    /// (they are written into the scoped statement), a path with `{id}`.
    pub fn check(&self) -> Result<(), String> {
        if self.entities.is_empty() {
            return Err("the schema declares no entity".into());
        }
        for (i, entity) in self.entities.iter().enumerate() {
            if !ENTITIES.contains(&entity.entity.as_str()) {
                return Err(format!("unknown entity {:?}", entity.entity));
            }
            if self.entities[..i].iter().any(|e| e.entity == entity.entity) {
                return Err(format!("entity {:?} declared twice", entity.entity));
            }
            if !entity.path.starts_with('/') || !entity.path.contains("{id}") {
                return Err(format!(
                    "{}: path must start with / and contain {{id}}",
                    entity.entity
                ));
            }
            for (j, column) in entity.columns.iter().enumerate() {
                if !is_column_name(&column.name) || column.name == "id" {
                    return Err(format!(
                        "{}: bad column name {:?}",
                        entity.entity, column.name
                    ));
                }
                if entity.columns[..j].iter().any(|c| c.name == column.name) {
                    return Err(format!("{}: column {:?} twice", entity.entity, column.name));
                }
            }
        }
        Ok(())
    }

    /// The entity read through `table` (`rooms` → room; `my_rooms` → room).
    pub fn entity_of_table(&self, table: &str) -> Option<&EntitySchema> {
        let table = if table.eq_ignore_ascii_case(MY_ROOMS) {
            "rooms"
        } else {
            table
        };
        self.entities
            .iter()
            .find(|e| e.table().eq_ignore_ascii_case(table))
    }

    /// The entity by name.
    pub fn entity(&self, entity: &str) -> Option<&EntitySchema> {
        self.entities.iter().find(|e| e.entity == entity)
    }

    /// The tables a statement may read: one per entity, plus `my_rooms` for a signed-in
    /// user when rooms exist.
    pub fn tables(&self, signed_in: bool) -> Vec<String> {
        let mut tables: Vec<String> = self.entities.iter().map(EntitySchema::table).collect();
        if signed_in && self.entity("room").is_some() {
            tables.push(MY_ROOMS.into());
        }
        tables
    }

    /// The tables a statement may read, with their columns and row bounds, for the SQL
    /// validator's scoping and cost model.
    pub fn catalog(&self, signed_in: bool) -> Vec<Table> {
        catalog_of(&self.table_schemas(signed_in))
    }

    /// The tables as the SQL prompt describes them.
    pub fn table_schemas(&self, signed_in: bool) -> Vec<TableSchema> {
        let mut out = Vec::new();
        for entity in &self.entities {
            let mut columns = vec![col("id", ColumnType::Text, "listing id")];
            columns.extend(entity.columns.iter().cloned());
            out.push(
                TableSchema::new(entity.table(), columns.clone()).described(&entity.description),
            );
            if signed_in && entity.entity == "room" {
                out.push(
                    TableSchema::new(MY_ROOMS, columns)
                        .described("the signed-in landlord's own rooms (same columns)"),
                );
            }
        }
        out
    }

    /// The statement that runs a validated query for one site: the logical tables as
    /// (not materialised) CTEs
    /// over `rental_rows` filtered by `?1` (the site id) and the entity, the query as a
    /// subquery, and `LIMIT ?2` (the row cap). With `signed_in`, `my_rooms` is filtered
    /// by `?3` (the user id). Column names come from a [`check`](Self::check)ed schema.
    pub fn scoped_sql(&self, valid_sql: &str, signed_in: bool) -> String {
        let mut sql = String::from("WITH ");
        for (i, entity) in self.entities.iter().enumerate() {
            if i > 0 {
                sql.push_str(", ");
            }
            // `NOT MATERIALIZED`: every reference reads `rental_rows` itself, so an
            // `id` equality is a primary-key lookup (the cost model counts on it).
            sql.push_str(&format!(
                "{} AS NOT MATERIALIZED (SELECT id",
                entity.table()
            ));
            for column in entity.columns.iter().filter(|c| is_column_name(&c.name)) {
                sql.push_str(&format!(
                    ", json_extract(data, '$.{0}') AS {0}",
                    column.name
                ));
            }
            sql.push_str(&format!(
                " FROM rental_rows WHERE site_id = ?1 AND entity = '{}')",
                entity_literal(&entity.entity)
            ));
        }
        if signed_in && self.entity("room").is_some() {
            sql.push_str(&format!(
                ", {MY_ROOMS} AS NOT MATERIALIZED (SELECT * FROM rooms WHERE id IN (SELECT id FROM rental_rows \
                 WHERE site_id = ?1 AND entity = 'room' AND json_extract(data, '$.owner_id') = ?3))"
            ));
        }
        sql.push_str(" SELECT * FROM (");
        sql.push_str(valid_sql);
        sql.push_str(") LIMIT ?2");
        sql
    }
}

/// The entity as a SQL literal: one of the three fixed names, never anything else.
fn entity_literal(entity: &str) -> &'static str {
    ENTITIES
        .iter()
        .find(|e| **e == entity)
        .copied()
        .unwrap_or("none")
}

/// A logical table a statement may read: its name, its columns (`None`: unknown, so
/// every unqualified name inside a subquery over it may read the outer query) and the
/// most rows it holds (the cost model's bound). As JSON, it is what the Worker sends the
/// validator Worker (`sqlcheck/`) beside a statement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Table {
    /// As statements name it (`rooms`).
    pub name: String,
    /// Its column names, lowercase, `id` included.
    pub columns: Option<Vec<String>>,
    /// The most rows it holds for one site.
    pub max_rows: u64,
}

/// The validator's view of `tables`: names, lowercase columns and row bounds.
pub fn catalog_of(tables: &[TableSchema]) -> Vec<Table> {
    tables
        .iter()
        .map(|table| Table {
            columns: Some(
                table
                    .columns
                    .iter()
                    .map(|c| c.name.to_ascii_lowercase())
                    .collect(),
            ),
            name: table.name.clone(),
            max_rows: MAX_ROWS_PER_TABLE,
        })
        .collect()
}
