export LD_LIBRARY_PATH=$PWD/build/devlib
rm -rf build/python && mv build/pyc build/python
build/redtune load --force -o build/redtune.db db/tuned/*.sql > /dev/null
cp build/redtune.db build/python/redtune/redtune.db
export REDTUNE_BIN=$PWD/build/redtune
for f in 'api_gpu_segmented*' 'seg_re*'; do
  REDTUNE_TEST_FILTER="$f" CMOCKA_MESSAGE_OUTPUT=TAP timeout 150 build/tests/all gpu > $OUT/t.log 2>&1
  echo "C GPU tests '$f': exit $?: $(grep -c '^ok' $OUT/t.log) ok, $(grep '^not ok' $OUT/t.log | grep -vc SKIP) not ok"; grep -A10 '^not ok' $OUT/t.log | grep -v SKIP | head -20
done
PYTHONPATH=$PWD/build/python:$PWD/python/tests:$PWD/build/pyt PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 timeout 200 python3 -P -m pytest -q -p no:cacheprovider python/tests/test_gpu.py -k segmented > $OUT/py.log 2>&1
echo "python -k segmented: exit $?: $(tail -n 1 $OUT/py.log)"; grep -E '^(FAILED|ERROR|E )' $OUT/py.log | head
python3 - <<'PY'
import sqlite3, shutil
shutil.copy("build/redtune.db", "/tmp/noheavy.db")
db = sqlite3.connect("/tmp/noheavy.db")
n = db.execute("DELETE FROM best WHERE layout = 'offsets:heavy'").rowcount
db.commit(); print("noheavy.db: %d heavy rows removed" % n)
PY
for db in /tmp/noheavy.db build/redtune.db; do for sk in "" --skewed; do
  timeout 120 build/bench/redtune_bench --db $db --segmented offsets --profiles heavy,rand10_50,len3,one --sizes 30M --ops min --types f32 --regimes cold $sk --csv $OUT/skew_$(basename $db .db)${sk:+_skewed}.csv > $OUT/b.log 2>&1
  echo "== $db ${sk:-(no flag)}: exit $?"; grep -E "^ *(heavy|rand10_50|len3|one) " $OUT/b.log | cut -c1-150 | head -8
done; done
