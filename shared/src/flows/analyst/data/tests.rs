use super::*;
use alloc::vec;

#[test]
fn bounds_are_refused_where_they_are_passed() {
    let at = format!("a,b\n1,{}\n", "ệ".repeat(MAX_CELL_CHARS));
    assert!(parse_csv(&at).is_ok());
    let over = format!("a,b\n1,2\n3,\"{}\"\n", "x".repeat(MAX_CELL_CHARS + 1));
    assert_eq!(
        parse_csv(&over).unwrap_err(),
        "CSV row 3, column 2 (`b`): a cell is at most 50000 characters"
    );
    let wide = vec!["c"; MAX_COLUMNS + 1].join(",");
    assert!(
        parse_csv(&wide)
            .unwrap_err()
            .contains("at most 200 columns")
    );
    let long_name = format!("a,{}\n1,2\n", "n".repeat(MAX_COLUMN_NAME_CHARS + 1));
    assert!(
        parse_csv(&long_name)
            .unwrap_err()
            .contains("header column 2")
    );
    assert!(
        parse_csv(&format!("a\n{}\n", ",".repeat(1000)))
            .unwrap_err()
            .contains("row 2 has more cells")
    );
    let line = format!("{}\n", vec!["1"; 100].join(","));
    let many = format!(
        "{}\n{}",
        (0..100)
            .map(|i| format!("c{i}"))
            .collect::<Vec<_>>()
            .join(","),
        line.repeat(MAX_CELLS / 100 + 1)
    );
    assert!(parse_csv(&many).unwrap_err().contains("1000000 cells"));
    // JSON rows: any value, not only strings, counts in its written form.
    let nested = serde_json::json!([{"a": 1}, {"a": vec![1; MAX_CELL_CHARS / 2]}]);
    let rows = nested.as_array().unwrap();
    assert!(prepare_json(rows).unwrap_err().starts_with("rows[1] `a`"));
}
