"""Inputs shared by the decoding tests."""

#: A 1 KB "billion laughs": nested aliases in a pod's args, 9**9 strings once expanded.
LAUGHS = """apiVersion: v1
kind: Pod
metadata:
  name: laughs
spec:
  containers:
  - name: c
    image: busybox
    args:
    - &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
    - &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
    - &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
    - &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
    - &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
    - &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
    - &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
    - &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
    - &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""
