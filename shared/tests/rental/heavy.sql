-- Heavy but valid rental statements (issue 24): the validator must accept every one, and
-- scripts/bench-rental-sql.sh times them (with every other accepted statement of the
-- corpora) over the 5,000-listing demo data. One statement per line.
SELECT * FROM rooms ORDER BY price DESC
SELECT * FROM rooms ORDER BY district, price DESC, area_m2, created_at, title
SELECT district, count(*) AS n, avg(price) AS avg_price, min(price) AS lo, max(price) AS hi FROM rooms GROUP BY district ORDER BY avg_price DESC
SELECT city, district, ward, count(*) AS n FROM rooms GROUP BY city, district, ward ORDER BY n DESC
SELECT * FROM rooms WHERE price < (SELECT avg(price) FROM rooms) ORDER BY price
SELECT * FROM rooms WHERE district IN (SELECT district FROM room_seeking_posts) AND status = 'available' ORDER BY price
SELECT r.id, r.title, m.price FROM rooms r JOIN my_rooms m ON m.id = r.id ORDER BY m.price
SELECT id, title, (SELECT count(*) FROM posts p WHERE p.id = r.id) AS same FROM rooms r ORDER BY price DESC
SELECT DISTINCT district FROM rooms UNION SELECT DISTINCT district FROM posts UNION SELECT DISTINCT district FROM room_seeking_posts
WITH cheap AS (SELECT * FROM rooms WHERE price < 3000000) SELECT district, count(*) AS n FROM cheap GROUP BY district ORDER BY n DESC
SELECT strftime('%Y-%m', created_at) AS month, count(*) AS n, avg(price) AS avg_price FROM rooms GROUP BY month ORDER BY month
SELECT * FROM rooms WHERE lower(title) LIKE '%studio%' AND price BETWEEN 2000000 AND 5000000 ORDER BY area_m2 DESC
SELECT district, group_concat(id, ',') AS ids FROM rooms GROUP BY district
SELECT count(*) AS n FROM rooms WHERE title LIKE '%a%a%a%a%a%a%a%a%a%a%a%a%a%a%a%a%b'
SELECT count(*) AS n FROM rooms WHERE title LIKE '%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%_%z'
SELECT count(*) AS n FROM rooms WHERE address LIKE '%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%x'
SELECT * FROM rooms r WHERE EXISTS (SELECT 1 FROM my_rooms m WHERE m.id = r.id) ORDER BY price
SELECT * FROM rooms WHERE id IN (SELECT id FROM rooms WHERE price > 3000000 INTERSECT SELECT id FROM rooms WHERE area_m2 > 30)
SELECT title, price, area_m2, price / area_m2 AS per_m2 FROM rooms WHERE area_m2 > 0 ORDER BY per_m2 LIMIT 20
SELECT district, sum(CASE WHEN status = 'available' THEN 1 ELSE 0 END) AS free, count(*) AS total FROM rooms GROUP BY district HAVING count(*) > 10 ORDER BY free DESC
SELECT * FROM posts WHERE price > (SELECT avg(budget_max) FROM room_seeking_posts) AND district = 'Quận 1'
SELECT id FROM rooms WHERE district = 'Quận 1' UNION ALL SELECT id FROM posts WHERE district = 'Quận 1' UNION ALL SELECT id FROM room_seeking_posts WHERE district = 'Quận 1'
SELECT count(DISTINCT owner_id) AS owners, count(DISTINCT district) AS districts FROM rooms
SELECT owner_id, count(*) AS n, round(avg(price), 0) AS avg_price FROM rooms GROUP BY owner_id ORDER BY n DESC LIMIT 10
SELECT r.* FROM rooms r JOIN my_rooms m ON m.id = r.id JOIN rooms r2 ON r2.id = m.id ORDER BY r.created_at DESC
SELECT title, replace(title, 'Phòng', 'P.') AS short FROM rooms ORDER BY short
SELECT upper(substr(title, 1, 10)) || ' - ' || district AS label FROM rooms ORDER BY label
SELECT * FROM rooms WHERE julianday('2026-11-27') - julianday(created_at) < 400 ORDER BY created_at DESC
WITH d AS (SELECT district, avg(price) AS p FROM rooms GROUP BY district), top AS (SELECT * FROM d ORDER BY p DESC LIMIT 3) SELECT * FROM rooms WHERE district IN (SELECT district FROM top) ORDER BY price
SELECT * FROM rooms WHERE price = (SELECT max(price) FROM rooms WHERE district = 'Quận 1') OR price = (SELECT min(price) FROM rooms WHERE district = 'Quận 1')
SELECT (SELECT count(*) FROM rooms) AS rooms, (SELECT count(*) FROM posts) AS posts, (SELECT count(*) FROM room_seeking_posts) AS seeking
SELECT ward, district, count(*) AS n FROM rooms WHERE city = 'TP.HCM' GROUP BY ward, district HAVING avg(price) < (SELECT avg(price) FROM rooms) ORDER BY 3 DESC
SELECT * FROM (SELECT * FROM rooms WHERE status = 'available' ORDER BY price LIMIT 100) ORDER BY area_m2 DESC
SELECT coalesce(nullif(ward, ''), 'unknown') AS w, count(*) AS n FROM posts GROUP BY w ORDER BY 2 DESC
SELECT s.title, s.budget_max FROM room_seeking_posts s WHERE s.budget_max >= (SELECT min(price) FROM rooms) ORDER BY s.budget_max DESC
SELECT group_concat(title, ' | ') AS titles FROM rooms
SELECT length(group_concat(title || district || ward || city, '')) AS total FROM rooms
SELECT r.id FROM rooms r WHERE r.id NOT IN (SELECT m.id FROM my_rooms m) AND r.price < 2500000 ORDER BY r.price
SELECT * FROM rooms WHERE instr(lower(title), 'mini') > 0 OR instr(lower(address), 'lê lợi') > 0 ORDER BY price LIMIT 50
SELECT CAST(price / 1000000 AS INTEGER) AS million, count(*) AS n FROM rooms GROUP BY million ORDER BY million
SELECT id, title FROM rooms WHERE id = 'r42'
SELECT p.* FROM posts p JOIN rooms r ON r.id = p.id WHERE r.price > p.price
SELECT count(*) AS n FROM rooms a JOIN rooms b ON b.id = a.id JOIN my_rooms c ON c.id = b.id JOIN posts d ON d.id = c.id
SELECT DISTINCT city, district, ward FROM rooms UNION SELECT DISTINCT city, district, ward FROM posts ORDER BY 1, 2, 3
WITH a AS (SELECT id, title || title AS t FROM rooms), b AS (SELECT id, t || t AS t FROM a), c AS (SELECT id, t || t AS t FROM b), d AS (SELECT id, t || t AS t FROM c) SELECT id, length(t) AS n FROM d ORDER BY t DESC
SELECT r.id, (SELECT p.title FROM posts p WHERE p.id = r.id) AS post, (SELECT s.title FROM room_seeking_posts s WHERE s.id = r.id) AS seeking, (SELECT m.price FROM my_rooms m WHERE m.id = r.id) AS mine FROM rooms r ORDER BY 2, 3, 4
SELECT district, count(*) AS n FROM rooms WHERE id IN (SELECT id FROM rooms WHERE price > 2000000) AND id IN (SELECT id FROM rooms WHERE area_m2 > 20) AND district IN (SELECT district FROM posts) GROUP BY district ORDER BY n DESC
SELECT * FROM rooms WHERE title IN (SELECT title FROM posts UNION SELECT title FROM rooms UNION SELECT title FROM room_seeking_posts) ORDER BY title
SELECT * FROM rooms WHERE district IN (SELECT district FROM posts WHERE price > 4000000) AND city IN (SELECT city FROM room_seeking_posts WHERE budget_max > 3000000) ORDER BY price DESC
SELECT district, count(*) AS n, sum(price) AS total, min(created_at) AS first, max(created_at) AS last FROM posts GROUP BY district HAVING n > 5 ORDER BY total DESC
SELECT * FROM (SELECT district, count(*) AS n FROM rooms GROUP BY district) WHERE n > (SELECT count(*) / 40 FROM rooms) ORDER BY n DESC
SELECT status, city, count(*) AS n, avg(price) AS p FROM rooms GROUP BY status, city ORDER BY p DESC
SELECT title FROM rooms WHERE title LIKE '%Studio%' UNION SELECT title FROM posts WHERE title LIKE '%studio%' ORDER BY 1
SELECT a.id, a.title, b.title AS post, c.title AS seeking FROM rooms a JOIN posts b ON b.id = a.id JOIN room_seeking_posts c ON c.id = a.id ORDER BY a.price, b.price
SELECT DISTINCT t0.title FROM rooms t0 JOIN my_rooms t1 ON t1.id = t0.id ORDER BY t0.title
