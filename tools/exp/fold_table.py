# fold_table.py DIR - the table of tools/exp/dev_fold.sh: per case, every config timed by both
# binaries in both rounds, after/before of the mean of the two rounds (geometric mean, extremes),
# the median difference in microseconds, and the best median of each side. Markdown on stdout.
import csv, statistics as st, collections, sys
d=sys.argv[1].rstrip("/") + "/"
def load(f):
    r={}
    for row in csv.DictReader(open(d+f)):
        if row['status']!='ok': continue
        r[(row['op'],row['type'],int(row['n']),row['params'])]=float(row['median_us'])
    return r
B=[load('meas_before_1.csv'),load('meas_before_2.csv')]
A=[load('meas_after_1.csv'),load('meas_after_2.csv')]
cases=collections.defaultdict(list)
for k in B[0]:
    if all(k in x for x in B+A):
        b=(B[0][k]+B[1][k])/2; a=(A[0][k]+A[1][k])/2
        cases[k[:3]].append((k[3],b,a))
print("| case | n | configs | after/before, geometric mean | min | max | median difference (µs) | best before | best after |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for c,v in sorted(cases.items()):
    r=[a/b for _,b,a in v]
    bb=min(min(B[0][c+(p,)],B[1][c+(p,)]) for p,_,_ in v); ba=min(min(A[0][c+(p,)],A[1][c+(p,)]) for p,_,_ in v)
    dus=st.median([a-b for _,b,a in v])
    print("| %s %s | 2^%d | %d | %.4f | %.3f | %.3f | %+.3f | %.2f | %.2f |"%(c[0],c[1],c[2].bit_length()-1,len(v),st.geometric_mean(r),min(r),max(r),dus,bb,ba))
