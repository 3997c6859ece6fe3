# %%
import pandas as pd

# %%
"""
question: |
  Import the dataset from this [address](inputs/u.user).
  The data is separated by pipe (|).
  Assign it to a variable called users and use the 'user_id' as index

validator:
  namespace_check:
    users:

data:
  u.user: https://raw.githubusercontent.com/justmarkham/DAT8/master/data/u.user
"""

users = pd.read_csv('inputs/u.user', sep='|', index_col='user_id')

# %%
"""
question: See the first 25 entries
"""

users.head(25)

# %%
"""
question: See the last 10 entries
"""

users.tail(10)

# %%
"""
question: What is the number of observations in the dataset?
"""

users.shape[0]

# %%
"""
question: What is the number of columns in the dataset?
"""

users.shape[1]

# %%
"""
question: The name of all the columns.

validator:
  result:
    value_only: true
"""

users.columns

