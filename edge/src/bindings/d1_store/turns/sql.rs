//! The SQL of turns: reads of a turn's messages, its claim, failure mark and reopening.

/// The visitor's message with idempotency key `?3` (none when `?3` is NULL).
pub(super) const REPEATED_SQL: &str = concat!(
    "SELECT ",
    message_columns!(),
    " FROM messages WHERE conversation_id = ?1 AND site_id = ?2 AND idempotency_key = ?3"
);

/// The visitor's message `?3`.
pub(super) const TURN_MESSAGE_SQL: &str = concat!(
    "SELECT ",
    message_columns!(),
    " FROM messages WHERE id = ?3 AND conversation_id = ?1 AND site_id = ?2 AND role = 'user'"
);

/// The last `?4` messages before the message `?3`.
pub(super) const HISTORY_BEFORE_SQL: &str = concat!(
    "SELECT ",
    message_columns!(),
    " FROM messages WHERE conversation_id = ?1 AND site_id = ?2 AND seq < \
     (SELECT seq FROM messages WHERE id = ?3 AND conversation_id = ?1 AND site_id = ?2) \
     ORDER BY seq DESC LIMIT ?4"
);

/// What is stored under the reply id of the message `?3`.
pub(super) const REPLY_SQL: &str = concat!(
    "SELECT ",
    message_columns!(),
    " FROM messages WHERE conversation_id = ?1 AND site_id = ?2 AND id = \
     (SELECT reply_id FROM messages WHERE id = ?3 AND conversation_id = ?1 AND site_id = ?2)"
);

/// No complete reply is stored under `$reply` (an SQL expression).
macro_rules! unanswered {
    ($reply:literal) => {
        concat!(
            "NOT EXISTS (SELECT 1 FROM messages AS r WHERE r.id = ",
            $reply,
            " AND r.conversation_id = ?1 AND COALESCE(json_extract(r.metadata, '$.incomplete'), 0) = 0)"
        )
    };
}

/// Moves the visitor's message `?3`'s turn to reply id `?4` and removes its failure mark
/// (JSON path `?5`), unless a complete reply is stored under its current reply id.
pub(super) const CLAIM_SQL: &str = concat!(
    "UPDATE messages SET reply_id = ?4, metadata = json_remove(metadata, ?5) \
     WHERE id = ?3 AND conversation_id = ?1 AND site_id = ?2 AND role = 'user' AND ",
    unanswered!("messages.reply_id")
);

/// Marks the visitor's message `?3` (JSON path `?5` = code `?6`) while its turn is reply
/// `?4`'s and unanswered.
pub(super) const MARK_FAILED_SQL: &str = concat!(
    "UPDATE messages SET metadata = json_set(metadata, ?5, ?6) \
     WHERE id = ?3 AND conversation_id = ?1 AND site_id = ?2 AND reply_id = ?4 AND ",
    unanswered!("?4")
);

/// Removes the failure mark (JSON path `?5`) of the visitor's message `?3` once a complete
/// reply is stored under its reply id `?4`.
pub(super) const CLEAR_MARK_SQL: &str = concat!(
    "UPDATE messages SET metadata = json_remove(metadata, ?5) \
     WHERE id = ?3 AND conversation_id = ?1 AND site_id = ?2 AND reply_id = ?4 AND NOT ",
    unanswered!("?4")
);

/// The conversation's last visitor's message: its id, its reply id, whether it is marked
/// failed (JSON path `?3`) and whether a message (complete or partial) is stored under its
/// reply id; and the kind of the conversation's last message (a fixed text is not
/// regenerated).
pub(super) const LAST_TURN_SQL: &str = "SELECT u.id AS message_id, u.reply_id AS reply_id, \
     json_extract(u.metadata, ?3) IS NOT NULL AS failed, \
     EXISTS (SELECT 1 FROM messages AS r WHERE r.id = u.reply_id AND r.conversation_id = ?1 \
     AND r.site_id = ?2) AS replied, \
     (SELECT l.kind FROM messages AS l WHERE l.conversation_id = ?1 \
     AND l.site_id = ?2 ORDER BY l.seq DESC LIMIT 1) AS last_kind \
     FROM messages AS u WHERE u.conversation_id = ?1 AND u.site_id = ?2 AND u.role = 'user' \
     ORDER BY u.seq DESC LIMIT 1";

/// Moves the visitor's message `?3`'s turn from reply id `?4` to `?5` and removes its
/// failure mark (JSON path `?6`), only while the turn is settled (a message is stored
/// under `?4`, or it is marked failed) and nothing but that reply follows it.
pub(super) const REOPEN_SQL: &str = "UPDATE messages SET reply_id = ?5, metadata = json_remove(metadata, ?6) \
     WHERE id = ?3 AND conversation_id = ?1 AND site_id = ?2 AND role = 'user' \
     AND reply_id IS ?4 \
     AND (json_extract(metadata, ?6) IS NOT NULL OR EXISTS (SELECT 1 FROM messages AS r \
     WHERE r.id = ?4 AND r.conversation_id = ?1 AND r.site_id = ?2)) \
     AND NOT EXISTS (SELECT 1 FROM messages AS o WHERE o.conversation_id = ?1 \
     AND o.site_id = ?2 AND o.seq > messages.seq AND o.id IS NOT ?4) \
     RETURNING id";

/// The votes on the replaced reply `?4`, once the turn of `?3` is `?5`'s.
pub(super) const DROP_VOTES_SQL: &str = "DELETE FROM message_feedback WHERE message_id = ?4 \
     AND conversation_id = ?1 AND site_id = ?2 AND EXISTS (SELECT 1 FROM messages AS u \
     WHERE u.id = ?3 AND u.conversation_id = ?1 AND u.site_id = ?2 AND u.reply_id = ?5)";

/// The replaced reply `?4`, once the turn of `?3` is `?5`'s.
pub(super) const DROP_REPLY_SQL: &str = "DELETE FROM messages WHERE id = ?4 AND conversation_id = ?1 \
     AND site_id = ?2 AND role = 'assistant' AND EXISTS (SELECT 1 FROM messages AS u \
     WHERE u.id = ?3 AND u.conversation_id = ?1 AND u.site_id = ?2 AND u.reply_id = ?5)";
